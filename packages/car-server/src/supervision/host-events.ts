/**
 * `host.event`: what an operator's host is told about the whole server —
 * agents registering and leaving, their status, approvals requested and
 * resolved, supervision intents parked and decided (reference
 * websocket-core.md § Server-pushed notifications). A subscriber is a
 * connection that called `host.subscribe`; nothing is kept for anyone who
 * is not listening, so an event costs one set read when nobody is.
 *
 * With a `SharedOversight` (several servers on one database) an event is
 * also sent to the other servers while any of them has a subscriber, and
 * their events arrive here through `deliver`.
 */
import type { JsonObject } from "@car/ir";
import type { SharedOversight } from "@car/engine";

export type HostEventKind =
  | "agent_registered"
  | "agent_unregistered"
  | "status_changed"
  | "approval_requested"
  | "approval_resolved"
  | "supervision_parked"
  | "supervision_decided";

export type HostNotify = (params: JsonObject) => void;

export class HostEvents {
  readonly #subscribers = new Map<object, { id: string; notify: HostNotify }>();
  #seq = 0;
  /** How many host subscribers the other servers have (shared oversight only). */
  remoteSubscribers = 0;

  constructor(private readonly shared?: SharedOversight) {}

  /** Adds (or keeps) `key`'s subscription; with shared oversight, resolves once the other servers can read it. */
  async subscribe(key: object, notify: HostNotify): Promise<void> {
    const id = this.#subscribers.get(key)?.id ?? `host-${++this.#seq}`;
    this.#subscribers.set(key, { id, notify });
    await this.shared?.setSubscriber({ subscriber_id: id, kind: "host", filter: {} });
  }

  unsubscribe(key: object): boolean {
    const subscriber = this.#subscribers.get(key);
    if (subscriber === undefined) return false;
    this.#subscribers.delete(key);
    this.shared?.removeSubscriber(subscriber.id).catch(() => {});
    return true;
  }

  get subscribers(): number {
    return this.#subscribers.size;
  }

  /** Sends `{ kind, at, ...data }` to every subscriber, here and on the other servers. `data` is built only when someone listens. */
  emit(kind: HostEventKind, data: () => JsonObject): void {
    if (this.#subscribers.size === 0 && this.remoteSubscribers === 0) return;
    const params: JsonObject = { kind, at: new Date().toISOString(), ...data() };
    this.deliver(params);
    if (this.remoteSubscribers > 0) this.shared?.publishHostEvent(params);
  }

  /** Hands an event to this server's subscribers (one raised here, or on another server). */
  deliver(params: JsonObject): void {
    for (const s of this.#subscribers.values()) s.notify(params);
  }
}
