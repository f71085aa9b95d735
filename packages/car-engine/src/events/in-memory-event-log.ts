/**
 * The default `EventLog`: an array in append order plus a set of live
 * subscribers. Each subscriber has its own unbounded queue, so a slow
 * consumer costs memory rather than losing events; end the feed (`return()`
 * or the signal) when you stop reading.
 */
import type { CarEvent, EventQuery, NewEvent } from "./event.ts";
import { eventMatcher } from "./event-log.ts";
import type { EventLog, SubscribeOptions } from "./event-log.ts";

interface Subscriber {
  matches: (event: CarEvent) => boolean;
  queue: CarEvent[];
  /** Index of the next undelivered event in `queue`. */
  head: number;
  wake: (() => void) | undefined;
}

export class InMemoryEventLog implements EventLog {
  readonly #events: CarEvent[] = [];
  readonly #subscribers = new Set<Subscriber>();

  append(event: NewEvent): CarEvent {
    const stored = { seq: this.#events.length + 1, ...event } as CarEvent;
    this.#events.push(stored);
    if (this.#subscribers.size > 0) {
      for (const sub of this.#subscribers) {
        if (!sub.matches(stored)) continue;
        sub.queue.push(stored);
        const wake = sub.wake;
        sub.wake = undefined;
        wake?.();
      }
    }
    return stored;
  }

  query(query: EventQuery = {}): CarEvent[] {
    const matches = eventMatcher(query);
    let out = this.#events.filter(matches);
    if (query.order === "desc") out.reverse();
    if (query.limit !== undefined && query.limit > 0) out = out.slice(0, query.limit);
    return out;
  }

  count(query: EventQuery = {}): number {
    if (Object.keys(query).length === 0) return this.#events.length;
    const matches = eventMatcher(query);
    let n = 0;
    for (const e of this.#events) if (matches(e)) n++;
    return query.limit !== undefined && query.limit > 0 ? Math.min(n, query.limit) : n;
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterableIterator<CarEvent> {
    const sub: Subscriber = { matches: eventMatcher(options.filter ?? {}), queue: [], head: 0, wake: undefined };
    const subscribers = this.#subscribers;
    let done = false;
    const finish = (): void => {
      done = true;
      subscribers.delete(sub);
      options.signal?.removeEventListener("abort", finish);
      const wake = sub.wake;
      sub.wake = undefined;
      wake?.();
    };
    if (options.signal?.aborted) done = true;
    else {
      subscribers.add(sub);
      options.signal?.addEventListener("abort", finish, { once: true });
    }
    const iterator: AsyncIterableIterator<CarEvent> = {
      async next(): Promise<IteratorResult<CarEvent>> {
        for (;;) {
          if (sub.head < sub.queue.length) {
            const event = sub.queue[sub.head++]!;
            if (sub.head === sub.queue.length) {
              sub.queue.length = 0;
              sub.head = 0;
            }
            return { value: event, done: false };
          }
          if (done) return { value: undefined, done: true };
          await new Promise<void>((resolve) => {
            sub.wake = resolve;
          });
        }
      },
      async return(): Promise<IteratorResult<CarEvent>> {
        finish();
        sub.queue.length = 0;
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }
}
