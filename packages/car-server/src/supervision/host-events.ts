/**
 * `host.event`: what an operator's host is told about the whole server —
 * agents registering and leaving, their status, approvals requested and
 * resolved, supervision intents parked and decided (reference
 * websocket-core.md § Server-pushed notifications). A subscriber is a
 * connection that called `host.subscribe`; nothing is kept for anyone who
 * is not listening, so an event costs one set read when nobody is.
 */
import type { JsonObject } from "@car/ir";

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
  readonly #subscribers = new Map<object, HostNotify>();

  /** Adds (or keeps) `key`'s subscription; returns false when it already had one. */
  subscribe(key: object, notify: HostNotify): boolean {
    const had = this.#subscribers.has(key);
    this.#subscribers.set(key, notify);
    return !had;
  }

  unsubscribe(key: object): boolean {
    return this.#subscribers.delete(key);
  }

  get subscribers(): number {
    return this.#subscribers.size;
  }

  /** Sends `{ kind, at, ...data }` to every subscriber. `data` is built only when someone listens. */
  emit(kind: HostEventKind, data: () => JsonObject): void {
    if (this.#subscribers.size === 0) return;
    const params: JsonObject = { kind, at: new Date().toISOString(), ...data() };
    for (const notify of this.#subscribers.values()) notify(params);
  }
}
