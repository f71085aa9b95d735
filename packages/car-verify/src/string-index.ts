/**
 * A string → int32 map for verify's state-key table at a million keys: open
 * addressing with linear probing over one `Int32Array` of `[entry, value]`
 * slot pairs, sized once from the expected count, the keys themselves in one
 * insertion-order list. A JS `Map` of a million keys grows by doubling, each
 * step a large copy the collector must mark; this table, sized from the
 * action count, never grows. `groupByKey` alone on the bench's random DAG at
 * 1M actions, interleaved with the `Map` version in one process: 1,140–1,441
 * against 3,064–3,957 ms.
 *
 * Below `STRING_INDEX_MIN_KEYS` a `Map` is used instead (`stringIndex`
 * picks): its table fits in the caches, its hashing is native code from the
 * first call, and its code is not thrown away by a full collection, where
 * this class's was ("weak objects" deoptimizations): as the action-id index
 * of a 10k `dependencyEdges`, run after a collection, it took 35–45 ms
 * against the `Map`'s 20.
 *
 * Keys compare with `===`: any string is a key (`"__proto__"`, `""`, lone
 * surrogates). The hash is seeded per process, so keys crafted to collide in
 * one run do not collide in the next.
 */

/** From how many expected keys `stringIndex` builds a `StringIndex` rather than a `Map`. */
export const STRING_INDEX_MIN_KEYS = 65_536;

/** Slots per expected key: at most half the table is full, so probe runs stay short. */
const LOAD = 2;

/** A random odd seed for this process's hashes. */
const SEED = (Math.random() * 0x1_0000_0000) | 1;

/** FNV-1a over UTF-16 units from a seeded basis, then murmur3's finalizer so every bit reaches the low ones a mask keeps. */
function hashOf(key: string): number {
  let h = SEED;
  for (let c = 0; c < key.length; c++) h = Math.imul(h ^ key.charCodeAt(c), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** The power of two, at least 8, holding `count` keys at the load factor. */
function slotsFor(count: number): number {
  let size = 8;
  while (size < LOAD * count) size *= 2;
  return size;
}

export class StringIndex {
  /** Slot `s` is `#slots[2s]` (1 + the key's place in `#order`, 0 when empty) and `#slots[2s + 1]` (its value). */
  #slots: Int32Array;
  #mask: number;
  /** The keys in insertion order. */
  readonly #order: string[] = [];

  /** `expected`: how many keys it will probably hold; more only make it grow. */
  constructor(expected = 0) {
    const size = slotsFor(expected);
    this.#slots = new Int32Array(2 * size);
    this.#mask = size - 1;
  }

  get size(): number {
    return this.#order.length;
  }

  /** The slot holding `key`, or the empty slot where it would go. */
  #find(key: string): number {
    const slots = this.#slots;
    const order = this.#order;
    const mask = this.#mask;
    let s = hashOf(key) & mask;
    for (;;) {
      const entry = slots[2 * s]!;
      if (entry === 0 || order[entry - 1] === key) return s;
      s = (s + 1) & mask;
    }
  }

  get(key: string): number | undefined {
    const s = this.#find(key);
    return this.#slots[2 * s] === 0 ? undefined : this.#slots[2 * s + 1];
  }

  /** Maps `key` to `value`, a 32-bit integer (an index), replacing an earlier value (its place in the order stays). */
  set(key: string, value: number): this {
    let s = this.#find(key);
    if (this.#slots[2 * s] === 0) {
      if (LOAD * (this.#order.length + 1) > this.#mask + 1) {
        this.#grow();
        s = this.#find(key);
      }
      this.#order.push(key);
      this.#slots[2 * s] = this.#order.length;
    }
    this.#slots[2 * s + 1] = value;
    return this;
  }

  /** Doubles the table, keeping every pair. */
  #grow(): void {
    const old = this.#slots;
    this.#slots = new Int32Array(2 * old.length);
    this.#mask = old.length - 1;
    for (let s = 0; s < old.length; s += 2) {
      const entry = old[s]!;
      if (entry === 0) continue;
      const t = this.#find(this.#order[entry - 1]!);
      this.#slots[2 * t] = entry;
      this.#slots[2 * t + 1] = old[s + 1]!;
    }
  }
}

/** An empty string → int32 map for about `expected` keys: a `Map` while that is few, else a `StringIndex` sized for them. */
export function stringIndex(expected: number): Map<string, number> | StringIndex {
  return expected < STRING_INDEX_MIN_KEYS ? new Map() : new StringIndex(expected);
}
