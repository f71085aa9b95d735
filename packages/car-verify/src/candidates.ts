/**
 * The pairs `transactionCheck` must judge, held a bounded batch at a time.
 * A conflict-heavy plan has millions of them: kept all at once as growing
 * lists they were hundreds of MB of array buffers, and V8 answers that much
 * external memory with full collections of the whole heap. So the pairs fill
 * fixed columns (no object per pair), and a full batch is settled — its
 * same-proposal pairs through each proposal's `Reachability`, which keeps its
 * index from one batch to the next — and handed on in the order it was added.
 */
import { emptyPairs, type PairList, unorderedPairs } from "./pairs.ts";
import type { Reachability } from "./reach.ts";

/** Pairs per batch: 64k, about 1.5 MB of columns, reused by every batch. */
export const CANDIDATE_BATCH = 1 << 16;

/**
 * `found(readWrite, key, ap, ai, bp, bi)`: action `ai` of proposal `ap` and
 * action `bi` of proposal `bp` conflict on key id `key` (read_write when
 * `readWrite` is 1, `ai` the reader). Pairs within one proposal are handed
 * on only when no dependency path orders them; pairs across proposals always.
 */
export type FoundPair = (readWrite: number, key: number, ap: number, ai: number, bp: number, bi: number) => void;

export class CandidateBatch {
  readonly #reach: readonly Reachability[];
  readonly #found: FoundPair;
  readonly #readWrite: Uint8Array;
  readonly #key: Int32Array;
  readonly #ap: Int32Array;
  readonly #ai: Int32Array;
  readonly #bp: Int32Array;
  readonly #bi: Int32Array;
  readonly #ordered: Uint8Array;
  #count = 0;
  /** Per proposal: the batch's same-proposal pairs, and the slot each came from. */
  readonly #within: { pairs: PairList; slots: number[] }[];

  /** `reach[p]` answers for proposal `p`. */
  constructor(reach: readonly Reachability[], found: FoundPair, capacity = CANDIDATE_BATCH) {
    this.#reach = reach;
    this.#found = found;
    this.#readWrite = new Uint8Array(capacity);
    this.#key = new Int32Array(capacity);
    this.#ap = new Int32Array(capacity);
    this.#ai = new Int32Array(capacity);
    this.#bp = new Int32Array(capacity);
    this.#bi = new Int32Array(capacity);
    this.#ordered = new Uint8Array(capacity);
    this.#within = reach.map(() => ({ pairs: emptyPairs(), slots: [] }));
  }

  add(readWrite: number, key: number, ap: number, ai: number, bp: number, bi: number): void {
    if (this.#count === this.#key.length) this.flush();
    const c = this.#count++;
    this.#readWrite[c] = readWrite;
    this.#key[c] = key;
    this.#ap[c] = ap;
    this.#ai[c] = ai;
    this.#bp[c] = bp;
    this.#bi[c] = bi;
  }

  /** Settles the pairs added since the last flush and hands on the unordered ones, in order. */
  flush(): void {
    const count = this.#count;
    this.#count = 0;
    const [ap, ai, bp, bi] = [this.#ap, this.#ai, this.#bp, this.#bi];
    const ordered = this.#ordered;
    ordered.fill(0, 0, count);
    for (const w of this.#within) {
      w.pairs.a.length = 0;
      w.pairs.b.length = 0;
      w.slots.length = 0;
    }
    for (let c = 0; c < count; c++) {
      if (ap[c] !== bp[c]) continue;
      const w = this.#within[ap[c]!]!;
      w.pairs.a.push(ai[c]!);
      w.pairs.b.push(bi[c]!);
      w.slots.push(c);
    }
    this.#within.forEach((w, p) => {
      if (w.slots.length === 0) return;
      const unordered = unorderedPairs(this.#reach[p]!, w.pairs);
      for (let s = 0; s < w.slots.length; s++) if (unordered[s] === 0) ordered[w.slots[s]!] = 1;
    });
    for (let c = 0; c < count; c++) {
      if (ordered[c] === 0) this.#found(this.#readWrite[c]!, this.#key[c]!, ap[c]!, ai[c]!, bp[c]!, bi[c]!);
    }
  }
}
