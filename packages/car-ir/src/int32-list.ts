/**
 * A growable list of 32-bit integers, read back as a typed array view with
 * no copy: the flat edge and key-id arrays are filled this way and handed to
 * kernels (native or not) as they are.
 */
export class Int32List {
  #data: Int32Array;
  length = 0;

  constructor(capacity: number) {
    this.#data = new Int32Array(Math.max(16, capacity));
  }

  push(value: number): void {
    if (this.length === this.#data.length) {
      const grown = new Int32Array(2 * this.length);
      grown.set(this.#data);
      this.#data = grown;
    }
    this.#data[this.length++] = value;
  }

  /** The values pushed so far (a view: later pushes may or may not show through it). */
  view(): Int32Array {
    return this.#data.subarray(0, this.length);
  }
}
