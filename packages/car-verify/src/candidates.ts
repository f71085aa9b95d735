/**
 * The pairs `transactionCheck` must judge, held a bounded batch at a time.
 * A conflict-heavy plan has millions of them: kept all at once as growing
 * lists they were hundreds of MB of array buffers, and V8 answers that much
 * external memory with full collections of the whole heap. So the pairs fill
 * fixed columns (no object per pair), and a full batch is settled — its
 * same-proposal pairs through each proposal's `Reachability`, which keeps its
 * index from one batch to the next — and handed on in the order it was added.
 */
import { unorderedPairs } from "./pairs.ts";
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
  /**
   * The batch's same-proposal pairs, proposal by proposal (counting sort):
   * proposal `p`'s are at `#start[p]` up to `#start[p + 1]`, and `#slot` holds
   * the batch slot each came from. Columns reused by every batch, so settling
   * one allocates only the answers.
   */
  readonly #a: Int32Array;
  readonly #b: Int32Array;
  readonly #slot: Int32Array;
  readonly #start: Int32Array;

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
    this.#a = new Int32Array(capacity);
    this.#b = new Int32Array(capacity);
    this.#slot = new Int32Array(capacity);
    this.#start = new Int32Array(reach.length + 1);
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
    const start = this.#start;
    start.fill(0);
    for (let c = 0; c < count; c++) if (ap[c] === bp[c]) start[ap[c]! + 1]!++;
    for (let p = 0; p + 1 < start.length; p++) start[p + 1]! += start[p]!;
    const fill = start.slice(0, -1);
    for (let c = 0; c < count; c++) {
      if (ap[c] !== bp[c]) continue;
      const s = fill[ap[c]!]!++;
      this.#a[s] = ai[c]!;
      this.#b[s] = bi[c]!;
      this.#slot[s] = c;
    }
    const ordered = this.#ordered;
    ordered.fill(0, 0, count);
    this.#reach.forEach((reach, p) => {
      const from = start[p]!;
      const to = start[p + 1]!;
      if (from === to) return;
      const unordered = unorderedPairs(reach, this.#a.subarray(from, to), this.#b.subarray(from, to));
      for (let s = from; s < to; s++) if (unordered[s - from] === 0) ordered[this.#slot[s]!] = 1;
    });
    for (let c = 0; c < count; c++) {
      if (ordered[c] === 0) this.#found(this.#readWrite[c]!, this.#key[c]!, ap[c]!, ai[c]!, bp[c]!, bi[c]!);
    }
  }
}
