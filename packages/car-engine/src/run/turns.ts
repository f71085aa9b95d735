/**
 * Work done one piece per turn of the event loop. An action whose
 * parameters bring in large referenced outputs costs milliseconds at the
 * gate and at dispatch (reading the resolved form, writing the frame to the
 * tool), and a proposal can make dozens of them ready at once: run back to
 * back they would hold the loop, and every other connection, for as long as
 * all of them take. Each piece here runs in its own `setImmediate`, and the
 * next is scheduled only once it has run, so I/O is polled between pieces
 * (immediates queued together would all run in one check phase).
 */
export class Turns {
  readonly #queue: (() => void)[] = [];
  #head = 0;
  #scheduled = false;

  /** Some work is waiting for its turn. */
  get waiting(): boolean {
    return this.#scheduled;
  }

  /** Runs `work` in a later turn, after the work deferred before it. */
  defer(work: () => void): void {
    this.#queue.push(work);
    if (!this.#scheduled) this.#schedule();
  }

  #schedule(): void {
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const work = this.#queue[this.#head]!;
      this.#queue[this.#head++] = undefined as never;
      if (this.#head === this.#queue.length) {
        this.#queue.length = 0;
        this.#head = 0;
      } else this.#schedule();
      work();
    });
  }
}
