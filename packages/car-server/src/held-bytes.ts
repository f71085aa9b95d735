/**
 * What clients can make the server hold, bounded. Every connection is
 * assumed hostile, and each route to memory that is bounded only per call
 * (a proposal's tool outputs, a multi-agent call's answers, state values)
 * multiplies by the calls a client may run at once and by the connections
 * it may open. So the bytes held for clients are counted in one pool for
 * the process, split into one account per connection: going over either is
 * a typed `budget_exceeded` error, never an abort of the process.
 */
import { CarError } from "@car/ir";

export class HeldBytes {
  #held = 0;
  constructor(readonly limit: number) {}

  get held(): number {
    return this.#held;
  }

  /** A connection's account, holding at most `quota` bytes of the pool. */
  account(quota: number): HeldAccount {
    return new HeldAccount(this, quota);
  }

  /** @internal Moves the pool's count; the accounts check their quota first. */
  adjust(bytes: number, what: string): void {
    if (bytes > 0 && this.#held + bytes > this.limit) {
      throw new CarError(
        "budget_exceeded",
        `${what}: the server would hold ${this.#held + bytes} bytes for its clients, over its ${this.limit}-byte bound (--max-held-bytes); retry when running calls finish`,
        { limit: this.limit },
      );
    }
    this.#held += bytes;
  }
}

/** One connection's share of the pool. */
export class HeldAccount {
  #held = 0;
  constructor(
    private readonly pool: HeldBytes,
    readonly quota: number,
  ) {}

  get held(): number {
    return this.#held;
  }

  /** Counts `bytes` more as held, or refuses with `budget_exceeded` (nothing counted). */
  take(bytes: number, what: string): void {
    if (this.#held + bytes > this.quota) {
      throw new CarError(
        "budget_exceeded",
        `${what}: this connection would hold ${this.#held + bytes} bytes, over its ${this.quota}-byte share (--max-held-bytes-per-connection)`,
        { limit: this.quota },
      );
    }
    this.pool.adjust(bytes, what);
    this.#held += bytes;
  }

  release(bytes: number): void {
    const n = Math.min(bytes, this.#held);
    this.#held -= n;
    this.pool.adjust(-n, "release");
  }

  /** Gives everything back (the connection closed). */
  close(): void {
    this.release(this.#held);
  }
}

/**
 * State values held in memory (every store keeps its state cached), counted
 * against the pool by key: writing a key replaces what it counted. State
 * outlives the connection that wrote it, so it is the process's to hold,
 * not a connection's; one value may still be no larger than a connection's
 * share.
 */
export class HeldState {
  readonly #sizes = new WeakMap<object, Map<string, number>>();
  constructor(private readonly pool: HeldBytes) {}

  /** Counts `bytes` for `key` in `store` in place of what it held, or refuses with `budget_exceeded`. */
  replace(store: object, key: string, bytes: number, quota: number): void {
    if (bytes > quota) {
      throw new CarError(
        "budget_exceeded",
        `state.set: the value has ${bytes} bytes, over one connection's ${quota}-byte share (--max-held-bytes-per-connection)`,
        {
          limit: quota,
        },
      );
    }
    let sizes = this.#sizes.get(store);
    if (sizes === undefined) this.#sizes.set(store, (sizes = new Map()));
    const before = sizes.get(key) ?? 0;
    this.pool.adjust(bytes - before, "state.set");
    sizes.set(key, bytes);
  }

  /** Gives back everything counted for `store` (a session's own in-memory store, gone with the session). */
  forget(store: object): void {
    const sizes = this.#sizes.get(store);
    if (sizes === undefined) return;
    let total = 0;
    for (const bytes of sizes.values()) total += bytes;
    this.pool.adjust(-total, "release");
    this.#sizes.delete(store);
  }
}
