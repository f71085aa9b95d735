/**
 * The default `EventLog`: an array in append order plus the shared live
 * feed. Each subscriber has its own unbounded queue, so a slow consumer
 * costs memory rather than losing events; end the feed (`return()` or the
 * signal) when you stop reading.
 */
import type { CarEvent, EventQuery, NewEvent } from "./event.ts";
import { EventFeed } from "./event-feed.ts";
import { eventMatcher, limitCount, selectEvents } from "./event-log.ts";
import type { EventLog, SubscribeOptions } from "./event-log.ts";

export class InMemoryEventLog implements EventLog {
  #events: CarEvent[] = [];
  #nextSeq = 1;
  readonly #feed = new EventFeed();

  /** Takes ownership of `event` (it becomes the stored record): the engine appends hundreds of thousands, so no copy is made. */
  append(event: NewEvent): CarEvent {
    const stored = event as CarEvent;
    stored.seq = this.#nextSeq++;
    this.#events.push(stored);
    this.#feed.publish(stored);
    return stored;
  }

  query(query: EventQuery = {}): CarEvent[] {
    return selectEvents(this.#events, query);
  }

  count(query: EventQuery = {}): number {
    if (Object.keys(query).length === 0) return this.#events.length;
    const matches = eventMatcher(query);
    let n = 0;
    for (const e of this.#events) if (matches(e)) n++;
    return limitCount(n, query);
  }

  /** Removes events a refused commit took back; their seqs are not reused. */
  retract(events: ReadonlySet<CarEvent>): void {
    this.#events = this.#events.filter((e) => !events.has(e));
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterableIterator<CarEvent> {
    return this.#feed.subscribe(options);
  }
}
