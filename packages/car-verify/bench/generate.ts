/**
 * Benchmark proposals, one generator per shape the scaling goals name. Each
 * returns JSON text, the form a proposal arrives in, and is deterministic.
 *
 * - random: every action depends on up to three random earlier actions,
 *   checks that its first dependency's key exists, and writes one key — from
 *   a shared pool for 10% of actions (about ten writers per shared key), its
 *   own key otherwise.
 * - chain: one long dependency chain.
 * - fanout: one root and every other action depending on it alone.
 * - conflict: independent writers over ten keys (n/10 writers per key), each
 *   also reading the next key — many writers of few keys.
 * - outputs: a chain whose parameters pass `$<id>.output` of the previous
 *   two actions along, and reach far back: the first action's output and a
 *   random earlier action's (every reference is checked against the graph).
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
export const CONFLICT_KEYS = 10;

/** Joins actions into proposal text without holding every action object at once. */
function proposalJson(n: number, name: string, action: (i: number) => object): string {
  const parts: string[] = new Array(n);
  for (let i = 0; i < n; i++) parts[i] = JSON.stringify(action(i));
  return `{"id":"${name}${n}","source":"bench","actions":[${parts.join(",")}]}`;
}

export function randomProposalJson(n: number, seed = 1): string {
  const rand = rng(seed);
  const pool = Math.max(1, Math.round((n * SHARED_FRACTION) / 10));
  const keys: string[] = [];
  return proposalJson(n, "random", (i) => {
    const key = rand(1000) < SHARED_FRACTION * 1000 ? `shared_${rand(pool)}` : `k${i}`;
    keys.push(key);
    const deps = i === 0 ? [] : [...new Set(Array.from({ length: DEPS_PER_ACTION }, () => rand(i)))];
    return {
      id: `a${i}`,
      type: "tool_call",
      tool: `tool${i % 16}`,
      parameters: { n: i },
      dependencies: deps.map((d) => `a${d}`),
      preconditions: deps.length > 0 ? [{ key: keys[deps[0]!], operator: "exists" }] : [],
      expected_effects: { [key]: i },
    };
  });
}

export function chainProposalJson(n: number): string {
  return proposalJson(n, "chain", (i) => ({
    id: `a${i}`,
    type: "tool_call",
    tool: `tool${i % 16}`,
    parameters: { n: i },
    dependencies: i === 0 ? [] : [`a${i - 1}`],
    preconditions: i === 0 ? [] : [{ key: `k${i - 1}`, operator: "exists" }],
    expected_effects: { [`k${i}`]: i },
  }));
}

export function fanoutProposalJson(n: number): string {
  return proposalJson(n, "fanout", (i) => ({
    id: `a${i}`,
    type: "tool_call",
    tool: `tool${i % 16}`,
    parameters: { n: i },
    dependencies: i === 0 ? [] : ["a0"],
    expected_effects: { [`k${i}`]: i },
  }));
}

export function conflictProposalJson(n: number): string {
  return proposalJson(n, "conflict", (i) => ({
    id: `a${i}`,
    type: "tool_call",
    tool: `tool${i % 16}`,
    parameters: { n: i },
    read_set: [`shared_${(i + 1) % CONFLICT_KEYS}`],
    preconditions: [{ key: `shared_${(i + 1) % CONFLICT_KEYS}`, operator: "exists" }],
    expected_effects: { [`shared_${i % CONFLICT_KEYS}`]: i },
  }));
}

export function outputsProposalJson(n: number, seed = 1): string {
  const rand = rng(seed);
  return proposalJson(n, "outputs", (i) => ({
    id: `a${i}`,
    type: "tool_call",
    tool: `tool${i % 16}`,
    parameters:
      i === 0
        ? { n: 0 }
        : { input: `$a${i - 1}.output`, earlier: `$a${Math.max(0, i - 2)}.output.value`, first: "$a0.output", far: `$a${rand(i)}.output.value` },
    dependencies: i === 0 ? [] : [`a${i - 1}`],
    expected_effects: { [`k${i}`]: i },
  }));
}

export const SHAPES = {
  random: randomProposalJson,
  chain: chainProposalJson,
  fanout: fanoutProposalJson,
  conflict: conflictProposalJson,
  outputs: outputsProposalJson,
} as const satisfies Record<string, (n: number) => string>;

export type Shape = keyof typeof SHAPES;
