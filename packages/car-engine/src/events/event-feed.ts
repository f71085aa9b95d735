/**
 * Live subscribers of an event log (`EventLog.subscribe`): a feed per
 * subscriber, filtered, ended by `return()` or an abort signal. Kept apart
 * from storage so every log, in memory or durable, notifies the same way.
 * Each feed has its own unbounded queue, so a slow consumer costs memory
 * rather than losing events.
 */
import { AsyncQueue } from "../async-queue.ts";
import type { CarEvent } from "./event.ts";
import { eventMatcher } from "./event-log.ts";
import type { SubscribeOptions } from "./event-log.ts";

interface Subscriber {
  matches: (event: CarEvent) => boolean;
  queue: AsyncQueue<CarEvent>;
}

export class EventFeed {
  readonly #subscribers = new Set<Subscriber>();

  /** Hands `event` to every matching subscriber. */
  publish(event: CarEvent): void {
    if (this.#subscribers.size === 0) return;
    for (const sub of this.#subscribers) if (sub.matches(event)) sub.queue.push(event);
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterableIterator<CarEvent> {
    const { signal } = options;
    const sub: Subscriber = {
      matches: eventMatcher(options.filter ?? {}),
      queue: new AsyncQueue<CarEvent>(() => {
        this.#subscribers.delete(sub);
        signal?.removeEventListener("abort", stop);
      }),
    };
    const stop = (): void => sub.queue.end();
    if (signal?.aborted) sub.queue.end();
    else {
      this.#subscribers.add(sub);
      signal?.addEventListener("abort", stop, { once: true });
    }
    return sub.queue;
  }

  /** Ends every feed (the log is closing). */
  close(): void {
    for (const sub of [...this.#subscribers]) sub.queue.end();
  }
}
