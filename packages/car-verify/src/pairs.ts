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
 * Returns `false` when the key was too busy for every pair to be listed.
 */
export function pairsWithin(members: ArrayLike<number>, add: AddPair): boolean {
  const m = members.length;
  if (m <= ALL_PAIRS_LIMIT) {
    for (let i = 0; i < m; i++) for (let j = i + 1; j < m; j++) add(members[i]!, members[j]!);
    return true;
  }
  for (let i = 0; i + 1 < m; i++) add(members[i]!, members[i + 1]!);
  return false;
}

/**
 * Candidate pairs between one key's readers and writers (each in topological
 * order), skipping an action paired with itself. Returns `false` when only
 * neighbouring pairs were listed.
 */
export function pairsAcross(readers: ArrayLike<number>, writers: ArrayLike<number>, pos: Int32Array, add: AddPair): boolean {
  if (readers.length <= ALL_PAIRS_LIMIT && writers.length <= ALL_PAIRS_LIMIT) {
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
