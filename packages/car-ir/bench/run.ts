/**
 * @car/ir benchmarks. Every figure is a ratio against a baseline measured in
 * the same run, so the numbers mean the same on any machine:
 *
 *  1. parse+validate a 10k-action proposal vs plain `JSON.parse` of the text;
 *  2. `buildDag` for 1k/10k/100k actions vs a minimal hand-written array
 *     Kahn's algorithm and vs graphology + graphology-dag
 *     `topologicalGenerations` (graph construction included for both).
 *
 * Run: `npm run bench` in packages/car-ir.
 */
import { DirectedGraph } from "graphology";
import { topologicalGenerations } from "graphology-dag";
import { Ajv } from "ajv";
import { buildDag, parseProposal, schemas, sequentialIds, type Action, newAction } from "../src/index.ts";
import { shapeProblems } from "../src/internal.ts";

/** Deterministic PRNG (mulberry32), so every run measures the same inputs. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Timing {
  /** Fastest run: the least disturbed by other processes, so ratios use it. */
  min: number;
  median: number;
}

/**
 * Times several functions INTERLEAVED (a, b, c, a, b, c, …) after `warmup`
 * unmeasured rounds, so a baseline and its subject see the same machine load
 * — other processes on a shared machine would otherwise skew the ratios.
 */
function timeAll(fns: readonly (() => unknown)[], runs: number, warmup = 2): Timing[] {
  for (let w = 0; w < warmup; w++) for (const fn of fns) fn();
  const samples: number[][] = fns.map(() => []);
  for (let r = 0; r < runs; r++) {
    fns.forEach((fn, k) => {
      const t0 = performance.now();
      fn();
      samples[k]!.push(performance.now() - t0);
    });
  }
  return samples.map((xs) => {
    xs.sort((a, b) => a - b);
    return { min: xs[0]!, median: xs[Math.floor(xs.length / 2)]! };
  });
}

function fmt(ms: number): string {
  return (ms < 10 ? ms.toFixed(2) : ms.toFixed(1)).padStart(7);
}

function row(label: string, t: Timing, baseline: Timing, note = ""): string {
  return `  ${label.padEnd(34)} min ${fmt(t.min)} ms  median ${fmt(t.median)} ms  ${(t.min / baseline.min).toFixed(2)}x${note}`;
}

// --- 1. parse + validate ----------------------------------------------------

/** A realistic proposal: mixed action types, parameters, preconditions, edges of both kinds, references. */
function proposalText(n: number): string {
  const r = rng(1);
  const actions: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const deps: string[] = [];
    if (i > 0) for (let k = 0; k < 2; k++) if (r() < 0.5) deps.push(`a${Math.floor(r() * i)}`);
    const uniq = [...new Set(deps)];
    const kind = r();
    if (kind < 0.6) {
      actions.push({
        id: `a${i}`,
        type: "tool_call",
        tool: `tool_${i % 17}`,
        parameters: { path: `/tmp/file-${i}.txt`, mode: "read", retries: i % 4, tags: ["x", "y"], ...(uniq[0] ? { input: `$${uniq[0]}.output.content` } : {}) },
        dependencies: uniq,
        idempotent: i % 3 === 0,
        timeout_ms: 30000,
        metadata: { rationale: "bench" },
      });
    } else if (kind < 0.85) {
      actions.push({ id: `a${i}`, type: "state_write", parameters: { key: `k${i % 50}`, value: i }, expected_effects: { [`k${i % 50}`]: i } });
    } else {
      actions.push({
        id: `a${i}`,
        type: "assertion",
        preconditions: [
          { key: `k${i % 50}`, operator: "exists" },
          { key: "ready", value: true },
        ],
        state_dependencies: [`k${i % 50}`],
      });
    }
  }
  return JSON.stringify({ id: "abc123def456", source: "bench", timestamp: "2026-05-02T12:00:00Z", actions, context: { session_id: "s" } });
}

function benchParse(): void {
  const n = 10_000;
  const text = proposalText(n);
  const runs = 25;
  const parsedValue = JSON.parse(text) as unknown;
  const [jsonParse, schemaOnly, parse, parseValue] = timeAll(
    [
      () => JSON.parse(text),
      () => shapeProblems("actionProposal", JSON.parse(text)),
      () => parseProposal(text, { ids: sequentialIds() }),
      () => parseProposal(parsedValue, { ids: sequentialIds() }),
    ],
    runs,
  ) as [Timing, Timing, Timing, Timing];
  console.log(`\nparse+validate, ${n} actions (${(text.length / 1e6).toFixed(1)} MB of JSON); ratio = min / baseline min`);
  console.log(row("JSON.parse (baseline)", jsonParse, jsonParse));
  console.log(row("JSON.parse + schema validation", schemaOnly, jsonParse));
  console.log(row("parseProposal(text)", parse, jsonParse));
  console.log(row("parseProposal(parsed value)", parseValue, jsonParse, "  (checks JSON-ness instead of parsing)"));
  // What the pre-compiled validators save at startup: compiling the same schemas with ajv.
  const t0 = performance.now();
  const ajv = new Ajv({ allErrors: true });
  for (const s of Object.values(schemas)) ajv.addSchema(s);
  ajv.getSchema(schemas.actionProposal.$id);
  console.log(`  (runtime ajv compile of the proposal schemas, avoided by the standalone validators: ${fmt(performance.now() - t0)} ms)`);
}

// --- 2. buildDag --------------------------------------------------------------

/** `n` actions, each depending on up to 3 random earlier ones (explicit edges only, so every implementation sees the same graph). */
function dagActions(n: number): Action[] {
  const r = rng(n);
  const ids = sequentialIds("x");
  const actions: Action[] = [];
  for (let i = 0; i < n; i++) {
    const deps = new Set<string>();
    if (i > 0) {
      const k = Math.floor(r() * 4);
      for (let j = 0; j < k; j++) deps.add(`a${Math.floor(r() * i)}`);
    }
    actions.push(newAction("tool_call", { id: `a${i}`, tool: "t", dependencies: [...deps] }, { ids }));
  }
  return actions;
}

/** The hand-written baseline: id → index map, predecessor arrays, Kahn's algorithm with levels. */
function kahnLevels(actions: readonly Action[]): string[][] {
  const n = actions.length;
  const index = new Map<string, number>();
  for (let i = 0; i < n; i++) index.set(actions[i]!.id, i);
  const indegree = new Int32Array(n);
  const succs: number[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < n; i++) {
    for (const d of actions[i]!.dependencies) {
      succs[index.get(d)!]!.push(i);
      indegree[i]!++;
    }
  }
  const level = new Int32Array(n);
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (indegree[i] === 0) queue.push(i);
  for (let h = 0; h < queue.length; h++) {
    const i = queue[h]!;
    for (const s of succs[i]!) {
      if (level[s]! < level[i]! + 1) level[s] = level[i]! + 1;
      if (--indegree[s]! === 0) queue.push(s);
    }
  }
  const levels: string[][] = [];
  for (let i = 0; i < n; i++) (levels[level[i]!] ??= []).push(actions[i]!.id);
  return levels;
}

function graphologyLevels(actions: readonly Action[]): string[][] {
  const g = new DirectedGraph();
  for (const a of actions) g.addNode(a.id);
  for (const a of actions) for (const d of a.dependencies) g.mergeEdge(d, a.id);
  return topologicalGenerations(g);
}

function sameLevels(a: string[][], b: string[][]): boolean {
  return a.length === b.length && a.every((level, i) => level.length === b[i]!.length && [...level].sort().join() === [...b[i]!].sort().join());
}

function benchDag(): void {
  console.log("\nbuildDag (levels of ids) vs a hand-written array Kahn and graphology topologicalGenerations (graph construction included)");
  for (const n of [1_000, 10_000, 100_000]) {
    const actions = dagActions(n);
    const reference = buildDag(actions);
    if (!sameLevels(reference, kahnLevels(actions)) || !sameLevels(reference, graphologyLevels(actions))) {
      throw new Error(`implementations disagree at n=${n}`);
    }
    const runs = n >= 100_000 ? 7 : 21;
    const [ours, kahn, graphology] = timeAll([() => buildDag(actions), () => kahnLevels(actions), () => graphologyLevels(actions)], runs) as [
      Timing,
      Timing,
      Timing,
    ];
    console.log(`  n=${n}`);
    console.log(row("buildDag", ours, ours));
    console.log(row("hand-written array Kahn", kahn, ours, `  → buildDag is ${(ours.min / kahn.min).toFixed(2)}x Kahn`));
    console.log(row("graphology topologicalGenerations", graphology, ours, `  → buildDag is ${(ours.min / graphology.min).toFixed(2)}x graphology`));
  }
}

benchParse();
benchDag();
