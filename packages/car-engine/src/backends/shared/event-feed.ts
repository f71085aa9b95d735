/**
 * Live subscribers of a durable event log: the same contract as the
 * in-memory log's `subscribe` (a feed per subscriber, filtered, ended by
 * `return()` or an abort signal), kept apart from storage so every durable
 * backend notifies the same way.
 */
import { AsyncQueue } from "../../async-queue.ts";
import type { CarEvent } from "../../events/event.ts";
import { eventMatcher } from "../../events/event-log.ts";
import type { SubscribeOptions } from "../../events/event-log.ts";

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
