/**
 * A push-fed async iterator: producers `push` and `end`, one consumer reads
 * with `for await`. Unbounded by design — the event log and tool streams
 * must not drop what a slow reader has not seen yet; a reader that stops
 * calls `return()` (or breaks its loop), which runs `onClose`.
 */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  #items: T[] = [];
  #head = 0;
  #ended = false;
  #wake: (() => void) | undefined;
  readonly #onClose: () => void;

  constructor(onClose: () => void = () => {}) {
    this.#onClose = onClose;
  }

  get ended(): boolean {
    return this.#ended;
  }

  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#signal();
  }

  /** No more items: the reader finishes after draining what is queued. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#onClose();
    this.#signal();
  }

  async next(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.#head < this.#items.length) {
        const item = this.#items[this.#head++]!;
        if (this.#head === this.#items.length) {
          this.#items = [];
          this.#head = 0;
        }
        return { value: item, done: false };
      }
      if (this.#ended) return { value: undefined, done: true };
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  async return(): Promise<IteratorResult<T>> {
    this.end();
    this.#items = [];
    this.#head = 0;
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
