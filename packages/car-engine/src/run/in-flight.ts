/**
 * What an abort must cancel: tool calls being raced and backoff sleeps. Each
 * entry links itself into the list while it is in flight and unlinks when it
 * settles, so a call costs two pointer writes instead of a Set entry (at 100k
 * concurrent calls the Set's table was a measurable share of the heap).
 */

/** One call or sleep in flight. */
export abstract class InFlight {
  prev: InFlight | undefined = undefined;
  next: InFlight | undefined = undefined;
  /** Ends it now with `reason`; it unlinks itself. */
  abstract cancel(reason: string): void;
}

/** The entries in flight, in the order they started. */
export class InFlightList {
  #head: InFlight | undefined;
  #tail: InFlight | undefined;

  add(entry: InFlight): void {
    entry.prev = this.#tail;
    entry.next = undefined;
    if (this.#tail === undefined) this.#head = entry;
    else this.#tail.next = entry;
    this.#tail = entry;
  }

  remove(entry: InFlight): void {
    if (entry.prev === undefined) {
      if (this.#head !== entry) return; // not linked (already removed)
      this.#head = entry.next;
    } else entry.prev.next = entry.next;
    if (entry.next === undefined) this.#tail = entry.prev;
    else entry.next.prev = entry.prev;
    entry.prev = undefined;
    entry.next = undefined;
  }

  /** Cancels every entry in flight now, in start order; entries added meanwhile are not touched. */
  cancelAll(reason: string): void {
    const now: InFlight[] = [];
    for (let e = this.#head; e !== undefined; e = e.next) now.push(e);
    for (const e of now) e.cancel(reason);
  }
}
