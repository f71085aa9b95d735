/**
 * Batched reachability over a proposal's DAG, for the few pairs the conflict
 * checks actually ask about (writers of one key, readers against writers).
 *
 * A full transitive closure is quadratic in memory, and sweeping bitsets of
 * every query's source along the order (the exact method below) costs
 * sources × span: quadratic on a large random DAG. So each query goes
 * through three stages, cheapest first:
 * 1. labels (`reach-index.ts`) answer "no" in O(1) when the target is not
 *    later than the source in number, level, depth-first rank and height;
 * 2. a bidirectional search from both ends, pruned by the same labels
 *    (every node on a path lies between its ends in all four), each side in
 *    topological order so the two meet in the middle, answers most of the
 *    rest after a few dozen nodes: it stops at `searchBudget` edges;
 * 3. the queries that exhausted it are answered by propagating bitsets of
 *    their sources along the order, 1,024 sources at a time and only across
 *    the slice of the order the chunk spans.
 * Every stage is exact. @car/native's `reach` kernel follows the same stages
 * (used only when forced, see `NATIVE_REACH_MIN_QUERIES`), its search still
 * breadth-first on both sides: exact too, so its answers are the same; this
 * TypeScript is the reference.
 */
import type { DependencyGraph } from "@car/ir";
import { nativeKernels } from "@car/native";
import { HEIGHT, LABEL_WORDS, LEVEL, numberOf, RANK, type ReachIndex, reachIndex, STAMP } from "./reach-index.ts";

/**
 * From how many queries `auto` mode hands the whole batch to @car/native's
 * `reach` kernel (all three stages, on `DependencyGraph.flat`). Infinite:
 * since the search replaced most of the sweep the work is random memory
 * access, where Rust gains little over V8 — `pnpm --filter @car/verify
 * bench:kernels`, marshalling included, measured 1.55× at 100k actions and
 * 1.66× at 1M (quiet; 1.6× and 2.2× at load 8–10), short of the 3× a
 * kernel must earn (see the @car/native README). `CAR_NATIVE=always` still
 * runs it; the TypeScript below is the reference.
 */
export const NATIVE_REACH_MIN_QUERIES = Number.POSITIVE_INFINITY;

/**
 * Edges one query's search may scan before it is left to the bitset sweep:
 * the graph's edges / 32, what sweeping one source costs (a chunk sweeps
 * every edge in its slice with 32 words for 1,024 sources), and at least
 * `MIN_SEARCH_BUDGET`. So the searches never cost more, in order, than the
 * sweep they replace, even on hostile graphs (long parallel branches the
 * labels cannot tell apart). Measured on the bench's random DAG at 1M
 * actions: 4,096 edges left ~1% of the queries to the sweep and took 2× as
 * long as edges / 32 (94k), which leaves none.
 */
export function searchBudget(edges: number): number {
  return Math.max(MIN_SEARCH_BUDGET, Math.ceil(edges / 32));
}
export const MIN_SEARCH_BUDGET = 1024;

/** Bits per chunk of sources: 32 words of 32 bits. */
const CHUNK_WORDS = 32;
const CHUNK_SOURCES = CHUNK_WORDS * 32;

const NO = 0;
const YES = 1;
const GAVE_UP = 2;

/**
 * For each query `k`, whether a dependency path leads from `from[k]` to
 * `to[k]` (a node does not reach itself). `pos` is `topoPositions(graph)`;
 * `budget` is the edges each search may scan (tests lower it to drive
 * queries through the sweep).
 */
export function reachBatch(
  graph: DependencyGraph,
  pos: Int32Array,
  from: ArrayLike<number>,
  to: ArrayLike<number>,
  budget = searchBudget(graph.flat.preds.length),
): Uint8Array {
  return new Reachability(graph, pos, budget).batch(from, to);
}

/**
 * Reachability over one proposal's DAG asked in several batches, as
 * `reachBatch` answers one: the index, the search queues and the search
 * stamps are made at the first batch that needs them and kept for the next.
 * So a check can hand its pairs over a bounded batch at a time instead of
 * holding every pair of the proposal at once.
 */
export class Reachability {
  readonly #graph: DependencyGraph;
  /** `topoPositions(graph)`. */
  readonly pos: Int32Array;
  readonly #budget: number;
  #index: ReachIndex | undefined;
  #queues: { forward: Int32Array; backward: Int32Array } | undefined;
  /** Searches run so far: search `s` marks the nodes it visits with stamps `2s - 1` and `2s`. */
  #searches = 0;

  constructor(graph: DependencyGraph, pos: Int32Array, budget = searchBudget(graph.flat.preds.length)) {
    this.#graph = graph;
    this.pos = pos;
    this.#budget = budget;
  }

  /** For each query `k`, whether a dependency path leads from `from[k]` to `to[k]`. */
  batch(from: ArrayLike<number>, to: ArrayLike<number>): Uint8Array {
    const graph = this.#graph;
    const pos = this.pos;
    const budget = this.#budget;
    const answers = new Uint8Array(from.length);
    const native = nativeKernels(from.length, NATIVE_REACH_MIN_QUERIES);
    if (native !== undefined) {
      // The kernel does all of it on the graph's flat arrays: only queries not already in an Int32Array are copied.
      const { predStart, preds, order, level } = graph.flat;
      const column = (q: ArrayLike<number>) => (q instanceof Int32Array ? q : Int32Array.from(q));
      native.reach(predStart, preds, order, level, column(from), column(to), answers, budget);
      return answers;
    }
    // Position and level need no index: most batches that can be settled outright stop here.
    const pending: number[] = [];
    for (let k = 0; k < from.length; k++) {
      const u = from[k]!;
      const v = to[k]!;
      if (pos[v]! > pos[u]! && graph.level[v]! > graph.level[u]!) pending.push(k);
    }
    if (pending.length === 0) return answers;

    const index = (this.#index ??= reachIndex(graph, pos));
    const labels = index.labels;
    // A search queues at most one node per edge it scans, and each node once.
    const room = Math.min(budget, pos.length) + 1;
    const queues = (this.#queues ??= { forward: new Int32Array(room), backward: new Int32Array(room) });
    const at = index.at;
    const left: number[] = [];
    for (const k of pending) {
      const u = numberOf(at, from[k]!);
      const v = numberOf(at, to[k]!);
      // Numbers are topological too: a path goes up in them.
      if (u >= v) continue;
      const lu = LABEL_WORDS * u;
      const lv = LABEL_WORDS * v;
      if (labels[lu + RANK]! > labels[lv + RANK]! || labels[lu + HEIGHT]! <= labels[lv + HEIGHT]!) continue;
      const s = ++this.#searches;
      const found = search(index, u, v, 2 * s - 1, 2 * s, budget, queues);
      if (found === YES) answers[k] = 1;
      else if (found === GAVE_UP) left.push(k);
    }
    if (left.length > 0) sweep(index, from, to, left, answers);
    return answers;
  }
}

/**
 * Whether node `u` reaches node `v` (numbers in the index, u < v, both past
 * the label filter): a search from both ends at once, always growing the smaller
 * frontier, visiting only nodes whose labels lie strictly between the ends'.
 * Each side takes its nodes in topological order, the forward one lowest
 * number first and the backward one highest first (binary heaps), so each
 * knows every node it can reach on its side of its next number; once the
 * forward side's next number is past the backward side's, no path is left
 * to find. Proving "no" then costs the two regions up to where the sides meet,
 * not the whole gap from one end: on the bench's random DAG (1M actions) this
 * halved the edges scanned and their growth from 100k. Either side running dry
 * proves it too. `forward`/`backward` are this search's own stamps. Gives up
 * after `budget` edges.
 */
function search(
  index: ReachIndex,
  u: number,
  v: number,
  forward: number,
  backward: number,
  budget: number,
  queues: { forward: Int32Array; backward: Int32Array },
): number {
  const { predStart, preds, succStart, succs, labels } = index;
  // The forward heap holds numbers (lowest on top), the backward one their complements `~y` (highest on top).
  const fh = queues.forward;
  const bh = queues.backward;
  const levelU = labels[LABEL_WORDS * u + LEVEL]!;
  const rankU = labels[LABEL_WORDS * u + RANK]!;
  const heightU = labels[LABEL_WORDS * u + HEIGHT]!;
  const levelV = labels[LABEL_WORDS * v + LEVEL]!;
  const rankV = labels[LABEL_WORDS * v + RANK]!;
  const heightV = labels[LABEL_WORDS * v + HEIGHT]!;
  labels[LABEL_WORDS * u + STAMP] = forward;
  labels[LABEL_WORDS * v + STAMP] = backward;
  fh[0] = u;
  bh[0] = ~v;
  let fSize = 1;
  let bSize = 1;
  let work = 0;
  while (fSize > 0 && bSize > 0 && fh[0]! < ~bh[0]!) {
    if (fSize <= bSize) {
      const x = heapPop(fh, fSize--);
      const end = succStart[x + 1]!;
      for (let e = succStart[x]!; e < end; e++) {
        if (++work > budget) return GAVE_UP;
        const y = succs[e]!;
        // Successors are in ascending number: the rest lie past v too.
        if (y >= v) {
          if (y === v) return YES;
          break;
        }
        const at = LABEL_WORDS * y;
        const stamp = labels[at + STAMP]!;
        if (stamp === backward) return YES;
        if (stamp === forward || labels[at + LEVEL]! >= levelV || labels[at + RANK]! >= rankV || labels[at + HEIGHT]! <= heightV) continue;
        labels[at + STAMP] = forward;
        heapPush(fh, fSize++, y);
      }
    } else {
      const x = ~heapPop(bh, bSize--);
      const end = predStart[x + 1]!;
      for (let e = predStart[x]!; e < end; e++) {
        if (++work > budget) return GAVE_UP;
        const y = preds[e]!;
        if (y <= u) {
          if (y === u) return YES;
          continue;
        }
        const at = LABEL_WORDS * y;
        const stamp = labels[at + STAMP]!;
        if (stamp === forward) return YES;
        if (stamp === backward || labels[at + LEVEL]! <= levelU || labels[at + RANK]! <= rankU || labels[at + HEIGHT]! >= heightU) continue;
        labels[at + STAMP] = backward;
        heapPush(bh, bSize++, ~y);
      }
    }
  }
  return NO;
}

/** Adds `x` to the binary min-heap `heap[0 .. size)`. */
function heapPush(heap: Int32Array, size: number, x: number): void {
  let i = size;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent]! <= x) break;
    heap[i] = heap[parent]!;
    i = parent;
  }
  heap[i] = x;
}

/** Removes and returns the least value of the binary min-heap `heap[0 .. size)` (size > 0). */
function heapPop(heap: Int32Array, size: number): number {
  const top = heap[0]!;
  const last = heap[size - 1]!;
  const rest = size - 1;
  let i = 0;
  for (;;) {
    let child = 2 * i + 1;
    if (child >= rest) break;
    if (child + 1 < rest && heap[child + 1]! < heap[child]!) child++;
    if (heap[child]! >= last) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = last;
  return top;
}

/** Answers the queries `left` (indices into `from`/`to`) by sweeping bitsets of their sources, chunk by chunk. */
function sweep(index: ReachIndex, from: ArrayLike<number>, to: ArrayLike<number>, left: readonly number[], answers: Uint8Array): void {
  const at = index.at;
  const n = index.labels.length / LABEL_WORDS;
  // Queries bucketed by source number (counting sort), sources in ascending number.
  const byStart = new Int32Array(n + 1);
  for (const k of left) byStart[numberOf(at, from[k]!) + 1]!++;
  for (let p = 0; p < n; p++) byStart[p + 1]! += byStart[p]!;
  const fill = byStart.slice(0, n);
  const bySource = new Int32Array(left.length);
  for (const k of left) bySource[fill[numberOf(at, from[k]!)]!++] = k;
  const sources: number[] = [];
  for (let p = 0; p < n; p++) if (byStart[p + 1]! > byStart[p]!) sources.push(p);

  // One buffer for every chunk: rows of up to CHUNK_WORDS words for each node.
  const scratch = { rows: new Uint32Array(0), live: new Uint8Array(0) };
  const targets = { at, to, byStart, bySource };
  for (let start = 0; start < sources.length; start += CHUNK_SOURCES) {
    answerChunk(index, sources.slice(start, start + CHUNK_SOURCES), targets, answers, scratch);
  }
}

function answerChunk(
  index: ReachIndex,
  chunk: readonly number[],
  targets: { at: Int32Array | null; to: ArrayLike<number>; byStart: Int32Array; bySource: Int32Array },
  answers: Uint8Array,
  scratch: { rows: Uint32Array; live: Uint8Array },
): void {
  const { at, to, byStart, bySource } = targets;
  const words = Math.ceil(chunk.length / 32);
  const lo = chunk[0]!;
  let hi = lo;
  for (const u of chunk) for (let q = byStart[u]!; q < byStart[u + 1]!; q++) hi = Math.max(hi, numberOf(at, to[bySource[q]!]!));

  const span = hi - lo + 1;
  if (scratch.rows.length < span * words) scratch.rows = new Uint32Array(span * words);
  if (scratch.live.length < span) scratch.live = new Uint8Array(span);
  const rows = scratch.rows;
  const live = scratch.live; // row is non-zero: lets the sweep skip empty predecessors
  rows.fill(0, 0, span * words);
  live.fill(0, 0, span);
  chunk.forEach((u, slot) => {
    const r = u - lo;
    rows[r * words + (slot >>> 5)]! |= 1 << (slot & 31);
    live[r] = 1;
  });

  const { predStart, preds } = index;
  for (let r = 0; r < span; r++) {
    const base = r * words;
    const end = predStart[lo + r + 1]!;
    for (let e = predStart[lo + r]!; e < end; e++) {
      const pr = preds[e]! - lo;
      if (pr < 0 || live[pr] === 0) continue;
      const pbase = pr * words;
      for (let w = 0; w < words; w++) rows[base + w]! |= rows[pbase + w]!;
      live[r] = 1;
    }
  }

  chunk.forEach((u, slot) => {
    const word = slot >>> 5;
    const bit = 1 << (slot & 31);
    for (let q = byStart[u]!; q < byStart[u + 1]!; q++) {
      const k = bySource[q]!;
      const r = numberOf(at, to[k]!) - lo;
      if ((rows[r * words + word]! & bit) !== 0) answers[k] = 1;
    }
  });
}
