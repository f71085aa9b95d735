/**
 * Actions grouped by the state keys they read or write, for the conflict
 * checks. Keys are interned once into small integers and the groups are two
 * flat arrays (CSR), filled by walking the topological order — so each group
 * comes out already in topological order, with no sort, no per-key array and
 * no per-action set. At 100k–1M actions the Map-of-arrays this replaces was
 * a large share of verify's garbage-collection time.
 */

import { Int32List } from "@car/ir/internal";
import { nativeKernels } from "@car/native";

/**
 * From how many (action, key) entries `auto` mode buckets them in
 * @car/native's `group` kernel (when `order` is an Int32Array, such as
 * `DependencyGraph.flat.order`). Infinite: measured at 2.5–2.8× the
 * `bucketByKey` below from 100k to 400k actions (5.4× at 1M), short of the
 * 3× a native path must earn at 100k (bench:kernels); the interning around
 * it is most of `groupByKey` anyway. `CAR_NATIVE=always` runs it; the
 * differential tests keep it identical.
 */
export const NATIVE_GROUP_MIN_ENTRIES = Number.POSITIVE_INFINITY;

/** State keys ↔ dense integer ids, shared by every grouping of one check. */
export class KeyTable {
  readonly keys: string[] = [];
  readonly #ids = new Map<string, number>();

  /** The key's id, interning it on first sight. */
  intern(key: string): number {
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.keys.length;
      this.#ids.set(key, id);
      this.keys.push(key);
    }
    return id;
  }

  /** The key's id, or `undefined` when no action named it. */
  idOf(key: string): number | undefined {
    return this.#ids.get(key);
  }

  /** `internKeys`' buffers: one check groups writers, then readers, of each proposal in turn, so each grouping reuses the last one's. */
  #scratch: { at: Int32Array; ids: Int32List } | undefined;

  /** Buffers for interning `count` actions' keys (`at` has `count + 1` slots), valid until the next call. */
  scratch(count: number): { at: Int32Array; ids: Int32List } {
    if (this.#scratch === undefined || this.#scratch.at.length < count + 1) this.#scratch = { at: new Int32Array(count + 1), ids: new Int32List(count) };
    this.#scratch.ids.length = 0;
    return this.#scratch;
  }
}

export interface KeyGroups {
  readonly table: KeyTable;
  /** Key id `k`'s actions are `members[start[k] .. start[k + 1])`; ids interned later have none here. */
  readonly start: Int32Array;
  /** Action indices, each key's run in topological order, each action at most once per key. */
  readonly members: Int32Array;
  /** The key ids these actions name, in the order they first appear (declaration order). */
  readonly firstSeen: readonly number[];
}

/** An empty view for keys a grouping has no actions for. */
const NONE = new Int32Array(0);

/** The actions of key id `k`, in topological order (a view, not a copy). */
export function membersOf(groups: KeyGroups, k: number): Int32Array {
  return k + 1 < groups.start.length ? groups.members.subarray(groups.start[k]!, groups.start[k + 1]!) : NONE;
}

/** How many actions key id `k` has in this grouping. */
export function groupSize(groups: KeyGroups, k: number): number {
  return k + 1 < groups.start.length ? groups.start[k + 1]! - groups.start[k]! : 0;
}

/**
 * Groups `count` actions by the keys `pushKeys(i, out)` appends for action
 * `i` (repeats allowed). `order` is a topological order of all the actions.
 */
export function groupByKey(count: number, pushKeys: (i: number, out: string[]) => void, order: ArrayLike<number>, table = new KeyTable()): KeyGroups {
  const { at, ids, firstSeen } = internKeys(count, pushKeys, table);
  const keyCount = table.keys.length;
  const native = order instanceof Int32Array ? nativeKernels(ids.length, NATIVE_GROUP_MIN_ENTRIES) : undefined;
  if (native === undefined) return { table, ...bucketByKey(order, at, ids, keyCount), firstSeen };
  const start = new Int32Array(keyCount + 1);
  const members = new Int32Array(ids.length);
  native.group(order as Int32Array, at, ids, start, members);
  return { table, start, members, firstSeen };
}

/**
 * Each action's distinct key ids, flat: action `i`'s are `ids[at[i] .. at[i + 1])`;
 * `firstSeen` as in `KeyGroups`. `ids` is an Int32Array so the native kernel takes it as is.
 * `at` and `ids` are views of the table's scratch buffers, valid until the next
 * `internKeys` on the same table: at 1M actions a fresh pair per grouping was
 * 8 MB of array buffers (16 for a check) that only a full collection frees.
 */
export function internKeys(
  count: number,
  pushKeys: (i: number, out: string[]) => void,
  table: KeyTable,
): { at: Int32Array; ids: Int32Array; firstSeen: number[] } {
  const scratch = table.scratch(count);
  const at = scratch.at.subarray(0, count + 1);
  const ids = scratch.ids;
  const seenBy: number[] = []; // seenBy[k] === i + 1: action i already listed key k
  const firstSeen: number[] = [];
  const buffer: string[] = [];
  for (let i = 0; i < count; i++) {
    buffer.length = 0;
    pushKeys(i, buffer);
    for (const key of buffer) {
      const k = table.intern(key);
      if (seenBy[k] === i + 1) continue;
      if (seenBy[k] === undefined) firstSeen.push(k);
      seenBy[k] = i + 1;
      ids.push(k);
    }
    at[i + 1] = ids.length;
  }
  return { at, ids: ids.view(), firstSeen };
}

/**
 * The grouping proper, on interned ids: action `i`'s key ids are
 * `ids[at[i] .. at[i + 1])`; a stable counting sort over `order` puts each
 * key's actions in one run of `members`, runs indexed by `start`. The
 * reference for @car/native's `group`, which takes the same arrays.
 */
export function bucketByKey(order: ArrayLike<number>, at: Int32Array, ids: Int32Array, keyCount: number): { start: Int32Array; members: Int32Array } {
  // Counts, then each run's end; filling from the end of the order moves every end back to its run's start.
  const start = new Int32Array(keyCount + 1);
  for (let e = 0; e < ids.length; e++) start[ids[e]!]!++;
  for (let k = 1; k < keyCount; k++) start[k]! += start[k - 1]!;
  start[keyCount] = ids.length;
  const members = new Int32Array(ids.length);
  for (let p = order.length - 1; p >= 0; p--) {
    const i = order[p]!;
    for (let e = at[i]!; e < at[i + 1]!; e++) members[--start[ids[e]!]!] = i;
  }
  return { start, members };
}
