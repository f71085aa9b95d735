/**
 * A first-come, first-served concurrency limit. Waiters are served in the
 * order they asked, so which agents run first (and which ones a budget
 * refuses) depends only on the order the pattern submits them.
 */
export class Slots {
  readonly #limit: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];

  /** `limit` 0 means unlimited. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Resolves once a slot is held; pair every acquire with one `release`. */
  acquire(): Promise<void> {
    if (this.#limit === 0 || this.#used < this.#limit) {
      this.#used++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    // The slot passes straight to the next waiter; `used` stays the same.
    if (next !== undefined) next();
    else this.#used--;
  }
}
