/**
 * Batched reachability over a proposal's DAG, for the few pairs the conflict
 * checks actually ask about (writers of one key, readers against writers).
 *
 * Asking "is there a path u → v" pair by pair with a graph search is
 * quadratic on large plans, and a full transitive closure is quadratic in
 * memory. Instead the queries are first filtered by level and by two
 * different topological orders (O(1) "no path" answers; they settle pairs on
 * independent branches, the common shape of fanned-out plans). The rest are
 * answered exactly by propagating bitsets of *query sources only* along the
 * topological order, one chunk of 1024 sources at a time and only across the
 * slice of the order the chunk's queries span. Memory is one chunk's rows;
 * time is O(edges in the slice × 32 words) per chunk. That exact phase can
 * run in @car/native's kernel (see `NATIVE_REACH_MIN_QUERIES`); this
 * TypeScript is the reference.
 */
import type { DependencyGraph } from "@car/ir";
import { nativeKernels } from "@car/native";
import { oppositePositions } from "./topo-orders.ts";

/**
 * From how many queries `auto` mode hands the whole batch to @car/native's
 * `reach` kernel (filters and sweep, on `DependencyGraph.flat`). Measured by
 * `pnpm --filter @car/verify bench:kernels`, marshalling included: 3.2–4.5×
 * at ~500 queries, 5–10× from ~1,500, 7× at 100k actions (52k queries);
 * see the @car/native README for the table. Below this the call is cheap
 * either way. `CAR_NATIVE=0` keeps the TypeScript below.
 */
export const NATIVE_REACH_MIN_QUERIES = 1_000;

/** Bits per chunk of sources: 32 words of 32 bits. */
const CHUNK_WORDS = 32;
const CHUNK_SOURCES = CHUNK_WORDS * 32;

/**
 * For each query `k`, whether a dependency path leads from `from[k]` to
 * `to[k]` (a node does not reach itself). `pos` is `topoPositions(graph)`.
 */
export function reachBatch(graph: DependencyGraph, pos: Int32Array, from: readonly number[], to: readonly number[]): Uint8Array {
  const answers = new Uint8Array(from.length);
  const native = nativeKernels(from.length, NATIVE_REACH_MIN_QUERIES);
  if (native !== undefined) {
    // The kernel does all of it, filters included, on the graph's flat arrays: only the queries are copied.
    const { predStart, preds, order, level } = graph.flat;
    native.reach(predStart, preds, order, level, Int32Array.from(from), Int32Array.from(to), answers);
    return answers;
  }
  let pending: number[] = [];
  for (let k = 0; k < from.length; k++) {
    const u = from[k]!;
    const v = to[k]!;
    // Every edge raises the level and the topological position, so these answer "no" outright.
    if (u === v || graph.level[v]! <= graph.level[u]! || pos[v]! < pos[u]!) continue;
    pending.push(k);
  }
  if (pending.length === 0) return answers;
  const opposite = oppositePositions(graph);
  pending = pending.filter((k) => opposite[from[k]!]! < opposite[to[k]!]!);
  if (pending.length === 0) return answers;

  const preds = predIndex(graph, pos);
  // Group pending queries by source, sources in topological order.
  const bySource = new Map<number, number[]>();
  for (const k of pending) {
    const u = from[k]!;
    const list = bySource.get(u);
    if (list === undefined) bySource.set(u, [k]);
    else list.push(k);
  }
  const sources = [...bySource.keys()].sort((a, b) => pos[a]! - pos[b]!);

  // One buffer for every chunk: rows of up to CHUNK_WORDS words for each position.
  const scratch = { rows: new Uint32Array(0), live: new Uint8Array(0) };
  for (let start = 0; start < sources.length; start += CHUNK_SOURCES) {
    const chunk = sources.slice(start, start + CHUNK_SOURCES);
    answerChunk(preds, pos, chunk, bySource, to, answers, scratch);
  }
  return answers;
}

/** Predecessors as topological positions, in one flat array (CSR): the sweep's hot loop reads nothing else. */
interface PredIndex {
  start: Int32Array;
  pos: Int32Array;
}

function predIndex(graph: DependencyGraph, pos: Int32Array): PredIndex {
  const { predStart, preds, order } = graph.flat;
  const n = order.length;
  const start = new Int32Array(n + 1);
  const flat = new Int32Array(preds.length);
  for (let p = 0, k = 0; p < n; p++) {
    const i = order[p]!;
    const end = predStart[i + 1]!;
    for (let e = predStart[i]!; e < end; e++) flat[k++] = pos[preds[e]!]!;
    start[p + 1] = k;
  }
  return { start, pos: flat };
}

function answerChunk(
  preds: PredIndex,
  pos: Int32Array,
  chunk: readonly number[],
  bySource: ReadonlyMap<number, readonly number[]>,
  to: readonly number[],
  answers: Uint8Array,
  scratch: { rows: Uint32Array; live: Uint8Array },
): void {
  const words = Math.ceil(chunk.length / 32);
  const lo = pos[chunk[0]!]!;
  let hi = lo;
  for (const u of chunk) for (const k of bySource.get(u)!) hi = Math.max(hi, pos[to[k]!]!);

  const span = hi - lo + 1;
  if (scratch.rows.length < span * words) scratch.rows = new Uint32Array(span * words);
  if (scratch.live.length < span) scratch.live = new Uint8Array(span);
  const rows = scratch.rows;
  const live = scratch.live; // row is non-zero: lets the sweep skip empty predecessors
  rows.fill(0, 0, span * words);
  live.fill(0, 0, span);
  chunk.forEach((u, slot) => {
    const r = pos[u]! - lo;
    rows[r * words + (slot >>> 5)]! |= 1 << (slot & 31);
    live[r] = 1;
  });

  const start = preds.start;
  const predPos = preds.pos;
  for (let r = 0; r < span; r++) {
    const base = r * words;
    const end = start[lo + r + 1]!;
    for (let e = start[lo + r]!; e < end; e++) {
      const pr = predPos[e]! - lo;
      if (pr < 0 || live[pr] === 0) continue;
      const pbase = pr * words;
      for (let w = 0; w < words; w++) rows[base + w]! |= rows[pbase + w]!;
      live[r] = 1;
    }
  }

  chunk.forEach((u, slot) => {
    const word = slot >>> 5;
    const bit = 1 << (slot & 31);
    for (const k of bySource.get(u)!) {
      const r = pos[to[k]!]! - lo;
      if ((rows[r * words + word]! & bit) !== 0) answers[k] = 1;
    }
  });
}
