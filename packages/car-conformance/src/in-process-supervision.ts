/**
 * A supervisor in process: what `car serve`'s `supervision.*` methods do
 * over the wire, for a host without a server (the engine adapter). Watchers
 * subscribe with a filter; a proposal one of them matches is parked at
 * admission as the engine's trimmed intent (`supervisionIntent`: key names
 * and a digest, never a value) until the first `decide`. Fail-closed like
 * the server: a watcher that leaves does not release what it was shown, an
 * intent nobody decides within the timeout is denied, a cancelled run's
 * intent is denied, and deciding an intent that no longer waits is an error.
 */
import { CarError, type JsonObject, type JsonValue } from "@car/ir";
import type { IntentFilter, SupervisionDecision, Supervisor } from "@car/engine";
import { filterMatches, filterSubject, intentActions, intentJson, intentRecord, parseIntentFilter, supervisionIntent } from "@car/engine";

interface Watcher {
  filter: IntentFilter;
  notify(intent: JsonObject): void;
}

interface Parked {
  intent: JsonObject;
  settle(decision: SupervisionDecision): void;
}

/** The reference's default: an intent nobody answers in 30 s is denied. */
const DEFAULT_DECISION_TIMEOUT_MS = 30_000;

export class InProcessSupervision {
  readonly #watchers = new Set<Watcher>();
  /** Insertion order is parking order: `pending` lists oldest first. */
  readonly #parked = new Map<string, Parked>();
  #seq = 0;

  /** `sessionId` is the one session whose proposals this supervises (what its intents name). */
  constructor(
    readonly sessionId: string,
    readonly decisionTimeoutMs: number = DEFAULT_DECISION_TIMEOUT_MS,
  ) {}

  /** Watches proposals matching `filter` (as `supervision.subscribe` takes it); returns how to leave. Leaving releases nothing. */
  watch(filter: JsonValue | undefined, notify: (intent: JsonObject) => void): () => void {
    const watcher: Watcher = { filter: parseIntentFilter(filter), notify };
    this.#watchers.add(watcher);
    return () => void this.#watchers.delete(watcher);
  }

  /** What waits for a decision, oldest first. */
  pending(): JsonObject[] {
    return [...this.#parked.values()].map((p) => p.intent);
  }

  /** Settles a parked intent; one already decided, timed out or never parked is `not_found`, never a silent success. */
  decide(intentId: string, decision: SupervisionDecision): void {
    const parked = this.#parked.get(intentId);
    if (parked === undefined)
      throw new CarError("not_found", `supervision intent '${intentId.slice(0, 80)}' is not parked: it was already decided, timed out, or never existed`);
    parked.settle(decision);
  }

  /** Denies everything still parked, so no run waits on a supervisor that is gone with its host. */
  close(): void {
    for (const parked of [...this.#parked.values()]) parked.settle({ kind: "deny", reviewer: "host", reason: "the host closed" });
  }

  /** The engine's supervisor (`RuntimeOptions.supervisor`); nobody watching costs one empty-set read. */
  readonly supervisor: Supervisor = (request) => {
    if (this.#watchers.size === 0) return undefined;
    const actions = intentActions(request);
    const subject = filterSubject(actions, this.sessionId, undefined);
    const watchers = [...this.#watchers].filter((w) => filterMatches(w.filter, subject));
    if (watchers.length === 0) return undefined;
    const intent = supervisionIntent(`intent-${++this.#seq}-${request.run_id.slice(-8)}`, request.proposal.id, actions, {
      source: `conn:${this.sessionId}`,
      session_id: this.sessionId,
    });
    let settle!: (d: SupervisionDecision) => void;
    const decision = new Promise<SupervisionDecision>((resolve) => {
      settle = resolve;
    });
    const timer = setTimeout(
      () => finish({ kind: "deny", reviewer: "timeout", reason: `no supervisor decided within ${this.decisionTimeoutMs} ms` }),
      this.decisionTimeoutMs,
    );
    const onAbort = (): void => finish({ kind: "deny", reviewer: "cancelled", reason: "the submitting run was cancelled" });
    const finish = (d: SupervisionDecision): void => {
      if (!this.#parked.delete(intent.id)) return;
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      settle(d);
    };
    const json = intentJson(intent);
    this.#parked.set(intent.id, { intent: json, settle: finish });
    if (request.signal?.aborted === true) onAbort();
    else request.signal?.addEventListener("abort", onAbort, { once: true });
    for (const w of watchers) w.notify(json);
    return { intent_id: intent.id, record: intentRecord(intent), decision };
  };
}
