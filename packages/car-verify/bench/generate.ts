/**
 * Random DAG proposals for the benchmark: every action depends on up to
 * three random earlier actions, checks that its first dependency's key
 * exists, and writes one key — from a shared pool for 10% of actions
 * (about ten writers per shared key), its own key otherwise.
 */

function rng(seed: number): (m: number) => number {
  let s = seed >>> 0;
  return (m) => {
    s = (Math.imul(s ^ (s >>> 15), 2246822507) + 0x9e3779b9) >>> 0;
    s = (s ^ (s >>> 13)) >>> 0;
    return s % m;
  };
}

export const SHARED_FRACTION = 0.1;
export const DEPS_PER_ACTION = 3;

/** The proposal as JSON text, the form it arrives in. */
export function randomProposalJson(n: number, seed = 1): string {
  const rand = rng(seed);
  const pool = Math.max(1, Math.round((n * SHARED_FRACTION) / 10));
  const keys: string[] = [];
  const actions: object[] = [];
  for (let i = 0; i < n; i++) {
    const key = rand(1000) < SHARED_FRACTION * 1000 ? `shared_${rand(pool)}` : `k${i}`;
    keys.push(key);
    const deps = i === 0 ? [] : [...new Set(Array.from({ length: DEPS_PER_ACTION }, () => rand(i)))];
    actions.push({
      id: `a${i}`,
      type: "tool_call",
      tool: `tool${i % 16}`,
      parameters: { n: i },
      dependencies: deps.map((d) => `a${d}`),
      preconditions: deps.length > 0 ? [{ key: keys[deps[0]!], operator: "exists" }] : [],
      expected_effects: { [key]: i },
    });
  }
  return JSON.stringify({ id: `bench${n}`, source: "bench", actions });
}
