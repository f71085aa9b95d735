/**
 * Which pairs of actions the conflict checks look at, and which of those are
 * unordered. Work is grouped by state key, so only actions sharing a key are
 * ever paired; reachability comes in batches (`Reachability`), never a search per pair.
 */
import type { Reachability } from "./reach.ts";

/**
 * A key with more actions than this on one side is checked only between
 * neighbours in topological order: the reported pairs are still real
 * conflicts, but the list is no longer every pair (which would be quadratic).
 */
export const ALL_PAIRS_LIMIT = 256;

/**
 * Hands one candidate pair to its caller as it is found: a busy key has
 * hundreds of thousands, and collected first into growing lists they cost
 * more than judging them (the lists were rebuilt from empty for every key).
 */
export type AddPair = (x: number, y: number) => void;

/**
 * Candidate pairs among one key's actions (`members` in topological order).
 * Returns `false` when the key was too busy for every pair to be listed (or
 * `budget` had no room for them).
 */
export function pairsWithin(members: ArrayLike<number>, add: AddPair, budget?: PairBudget): boolean {
  const m = members.length;
  if (m <= ALL_PAIRS_LIMIT && spend(budget, (m * (m - 1)) / 2)) {
    for (let i = 0; i < m; i++) for (let j = i + 1; j < m; j++) add(members[i]!, members[j]!);
    return true;
  }
  for (let i = 0; i + 1 < m; i++) add(members[i]!, members[i + 1]!);
  return false;
}

/**
 * Candidate pairs between one key's readers and writers (each in topological
 * order), skipping an action paired with itself. Returns `false` when only
 * neighbouring pairs were listed (a busy key, or no room left in `budget`).
 */
export function pairsAcross(readers: ArrayLike<number>, writers: ArrayLike<number>, pos: Int32Array, add: AddPair, budget?: PairBudget): boolean {
  if (readers.length <= ALL_PAIRS_LIMIT && writers.length <= ALL_PAIRS_LIMIT && spend(budget, readers.length * writers.length)) {
    for (let x = 0; x < readers.length; x++) {
      const r = readers[x]!;
      for (let y = 0; y < writers.length; y++) if (writers[y] !== r) add(r, writers[y]!);
    }
    return true;
  }
  // Each reader against the nearest writer on either side in topological order.
  let j = 0;
  for (let x = 0; x < readers.length; x++) {
    const r = readers[x]!;
    while (j < writers.length && pos[writers[j]!]! < pos[r]!) j++;
    const before = j > 0 ? writers[j - 1]! : -1;
    const after = j < writers.length ? (writers[j] === r ? (j + 1 < writers.length ? writers[j + 1]! : -1) : writers[j]!) : -1;
    if (before !== -1 && before !== r) add(r, before);
    if (after !== -1 && after !== r) add(r, after);
  }
  return false;
}

/**
 * Pairs across two proposals' actions on one key (never ordered with each
 * other, so every pair is a conflict). Above `ALL_PAIRS_LIMIT` on either side
 * only a spanning set is listed — each of `xs` with the first of `ys`, each
 * other of `ys` with the first of `xs` — so every action still appears in a
 * reported conflict, in linear rather than quadratic work.
 */
export function pairsBetween(xs: ArrayLike<number>, ys: ArrayLike<number>, add: AddPair): void {
  if (xs.length === 0 || ys.length === 0) return;
  if (xs.length <= ALL_PAIRS_LIMIT && ys.length <= ALL_PAIRS_LIMIT) {
    for (let i = 0; i < xs.length; i++) for (let j = 0; j < ys.length; j++) add(xs[i]!, ys[j]!);
    return;
  }
  for (let i = 0; i < xs.length; i++) add(xs[i]!, ys[0]!);
  for (let k = 1; k < ys.length; k++) add(xs[0]!, ys[k]!);
}

/**
 * Pairs a `transactionCheck` of several proposals lists in full before it
 * lists only linear sets. Across P proposals the pairs of one key grow with
 * P² (50 proposals of 2,000 writers of one key made 4.9M conflicts and ran
 * V8 out of memory at 1 GB), and each proposal adds its own, so past this
 * many, over all keys, a key's actions are paired only with neighbours in
 * their proposal and with one action of another proposal: every action
 * still appears in a reported conflict, in linear work.
 */
export const CROSS_PROPOSAL_PAIR_BUDGET = 262_144;

/** What is left of `CROSS_PROPOSAL_PAIR_BUDGET` in one check. */
export interface PairBudget {
  left: number;
}

/** Takes `count` pairs from `budget` if it has room (no budget: always room). */
function spend(budget: PairBudget | undefined, count: number): boolean {
  if (budget === undefined) return true;
  if (count > budget.left) {
    budget.left = 0;
    return false;
  }
  budget.left -= count;
  return true;
}

/** Pairs across two proposals, in one key's actions. */
export type AddCrossPair = (p: number, x: number, q: number, y: number) => void;

/** How many pairs `pairsBetween` lists for groups of these sizes. */
function betweenCount(a: number, b: number): number {
  if (a === 0 || b === 0) return 0;
  return a <= ALL_PAIRS_LIMIT && b <= ALL_PAIRS_LIMIT ? a * b : a + b - 1;
}

/**
 * Write-write pairs of one key across proposals (`groups[p]`: proposal p's
 * writers): `pairsBetween` for every two proposals while the budget lasts,
 * else each writer with the first writer of the first proposal (and that
 * proposal's writers with the first of the second).
 */
export function pairsAmongProposals(groups: readonly ArrayLike<number>[], budget: PairBudget, add: AddCrossPair): void {
  const busy = groups.flatMap((g, p) => (g.length > 0 ? [p] : []));
  if (busy.length < 2) return;
  let count = 0;
  for (let a = 0; a < busy.length && count <= budget.left; a++) {
    for (let b = a + 1; b < busy.length; b++) count += betweenCount(groups[busy[a]!]!.length, groups[busy[b]!]!.length);
  }
  if (count <= budget.left) {
    budget.left -= count;
    for (let a = 0; a < busy.length; a++) {
      for (let b = a + 1; b < busy.length; b++) {
        const p = busy[a]!;
        const q = busy[b]!;
        pairsBetween(groups[p]!, groups[q]!, (x, y) => add(p, x, q, y));
      }
    }
    return;
  }
  budget.left = 0;
  const [p0, p1] = busy as [number, number];
  const first = groups[p0]![0]!;
  for (const q of busy.slice(1)) {
    const g = groups[q]!;
    for (let k = 0; k < g.length; k++) add(p0, first, q, g[k]!);
  }
  const g0 = groups[p0]!;
  for (let k = 1; k < g0.length; k++) add(p0, g0[k]!, p1, groups[p1]![0]!);
}

/**
 * How many read-write pairs of one key `pairsBetween` lists across proposals
 * (`readers[p]` with `writers[q]`, p ≠ q), counting no further than past `limit`.
 */
export function readWriteCrossCount(readers: readonly ArrayLike<number>[], writers: readonly ArrayLike<number>[], limit: number): number {
  let count = 0;
  for (let p = 0; p < readers.length && count <= limit; p++) {
    if (readers[p]!.length === 0) continue;
    for (let q = 0; q < writers.length; q++) if (q !== p) count += betweenCount(readers[p]!.length, writers[q]!.length);
  }
  return count;
}

/**
 * The spanning set of one key's read-write pairs across proposals, once the
 * budget is spent: each reader with one writer of another proposal, and each
 * writer with one reader of another proposal.
 */
export function readWriteSpanning(readers: readonly ArrayLike<number>[], writers: readonly ArrayLike<number>[], add: AddCrossPair): void {
  const reading = readers.flatMap((g, p) => (g.length > 0 ? [p] : []));
  const writing = writers.flatMap((g, q) => (g.length > 0 ? [q] : []));
  for (const p of reading) {
    const q = writing[0] !== p ? writing[0] : writing[1];
    if (q === undefined) continue;
    const r = readers[p]!;
    for (let k = 0; k < r.length; k++) add(p, r[k]!, q, writers[q]![0]!);
  }
  for (const q of writing) {
    const p = reading[0] !== q ? reading[0] : reading[1];
    if (p === undefined) continue;
    const w = writers[q]!;
    for (let k = 0; k < w.length; k++) add(p, readers[p]![0]!, q, w[k]!);
  }
}

/** For each pair `(a[k], b[k])`, 1 when neither action reaches the other. */
export function unorderedPairs(reach: Reachability, a: ArrayLike<number>, b: ArrayLike<number>): Uint8Array {
  const pos = reach.pos;
  const from = new Int32Array(a.length);
  const to = new Int32Array(a.length);
  for (let k = 0; k < a.length; k++) {
    const x = a[k]!;
    const y = b[k]!;
    // Only the earlier action in topological order can reach the later one.
    if (pos[x]! <= pos[y]!) {
      from[k] = x;
      to[k] = y;
    } else {
      from[k] = y;
      to[k] = x;
    }
  }
  const reached = reach.batch(from, to);
  const out = new Uint8Array(a.length);
  for (let k = 0; k < out.length; k++) out[k] = reached[k] === 1 ? 0 : 1;
  return out;
}
