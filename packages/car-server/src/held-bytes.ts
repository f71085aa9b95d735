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
    this.check(bytes, what);
    this.#held += bytes;
  }

  /** @internal Refuses with `budget_exceeded` when `bytes` more would pass the bound (nothing counted). */
  check(bytes: number, what: string): void {
    if (bytes > 0 && this.#held + bytes > this.limit) {
      throw new CarError(
        "budget_exceeded",
        `${what}: the server would hold ${this.#held + bytes} bytes for its clients, over its ${this.limit}-byte bound (--max-held-bytes); retry when running calls finish`,
        { limit: this.limit },
      );
    }
  }

  /** @internal Moves the pool's count unchecked: for what is already held (writes that landed after their check). */
  count(bytes: number): void {
    this.#held = Math.max(0, this.#held + bytes);
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
    this.check(bytes, what);
    this.pool.adjust(bytes, what);
    this.#held += bytes;
  }

  /** Refuses with `budget_exceeded` when `bytes` more would pass this connection's share (nothing counted). */
  check(bytes: number, what: string): void {
    if (this.#held + bytes > this.quota) {
      throw new CarError(
        "budget_exceeded",
        `${what}: this connection would hold ${this.#held + bytes} bytes, over its ${this.quota}-byte share (--max-held-bytes-per-connection)`,
        { limit: this.quota },
      );
    }
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
 * share. Written by `state.set` or by a proposal's actions alike.
 */
export class HeldState {
  readonly #sizes = new WeakMap<object, Map<string, number>>();
  constructor(private readonly pool: HeldBytes) {}

  /** Counts `bytes` for `key` in `store` in place of what it held, or refuses with `budget_exceeded`. */
  replace(store: object, key: string, bytes: number, quota: number): void {
    const sizes = new Map([[key, bytes]]);
    this.check(store, sizes, quota, "state.set");
    this.record(store, sizes);
  }

  /**
   * Refuses with `budget_exceeded` (nothing counted) when writing values of
   * `sizes` (bytes by key; 0 for a delete) in `store` would pass the pool, or
   * one value a connection's share.
   */
  check(store: object, sizes: ReadonlyMap<string, number>, quota: number, what: string): void {
    for (const bytes of sizes.values()) {
      if (bytes > quota) {
        throw new CarError(
          "budget_exceeded",
          `${what}: a value has ${bytes} bytes, over one connection's ${quota}-byte share (--max-held-bytes-per-connection)`,
          { limit: quota },
        );
      }
    }
    this.pool.check(this.#growth(store, sizes), what);
  }

  /** Counts the values of `sizes` as written in `store` (checked with `check` before they were). */
  record(store: object, sizes: ReadonlyMap<string, number>): void {
    this.pool.count(this.#growth(store, sizes));
    let held = this.#sizes.get(store);
    if (held === undefined) this.#sizes.set(store, (held = new Map()));
    for (const [key, bytes] of sizes) {
      if (bytes === 0) held.delete(key);
      else held.set(key, bytes);
    }
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

  /** What writing `sizes` in `store` adds to the count (negative: gives back). */
  #growth(store: object, sizes: ReadonlyMap<string, number>): number {
    const held = this.#sizes.get(store);
    let growth = 0;
    for (const [key, bytes] of sizes) growth += bytes - (held?.get(key) ?? 0);
    return growth;
  }
}
