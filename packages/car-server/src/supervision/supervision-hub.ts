/**
 * The server's supervision gate (reference websocket-core.md § supervision).
 * Operator connections subscribe with a filter; every proposal any session
 * submits that matches a subscriber's filter is parked at admission as an
 * intent, sent as a `supervision.intent` notification to each matching
 * subscriber, listed by `supervision.pending`, and waits for the first
 * `supervision.decide`. Fail-closed: an intent nobody answers within the
 * decision timeout is denied, and a supervisor that disconnects leaves what
 * it was shown parked (another supervisor, or the timeout, decides). With
 * no subscriber the gate is one empty-map read. A parked intent's bytes are
 * held on the submitting connection's share of the server's bound.
 */
import { CarError, type JsonObject, rfc3339 } from "@car/ir";
import type { ParkedProposal, SupervisionDecision, SupervisionRequest, Supervisor } from "@car/engine";
import type { HeldAccount } from "../held-bytes.ts";
import type { HostEvents } from "./host-events.ts";
import { filterMatches, type IntentFilter } from "./intent-filter.ts";
import { intentAction, intentJson, type SupervisionIntent, worstOf } from "./intent.ts";

/** The reference's default: an intent nobody answers in 30 s is denied. */
export const DEFAULT_DECISION_TIMEOUT_MS = 30_000;

interface Subscriber {
  filter: IntentFilter;
  notify(intent: JsonObject): void;
}

interface Parked {
  intent: SupervisionIntent;
  settle(decision: SupervisionDecision): void;
}

/** Who submits on a session: what the intent names and what a filter's `sessions` may match. */
export interface SubmitterInfo {
  source: string;
  agent_id: string | undefined;
  held: HeldAccount;
}

export class SupervisionHub {
  readonly #subscribers = new Map<object, Subscriber>();
  /** Insertion order is parking order: `pending` lists oldest first. */
  readonly #parked = new Map<string, Parked>();
  #seq = 0;

  constructor(
    readonly decisionTimeoutMs: number,
    private readonly host: HostEvents,
  ) {}

  get supervisors(): number {
    return this.#subscribers.size;
  }

  /** Subscribes `key` (a connection) or replaces its filter. */
  subscribe(key: object, filter: IntentFilter, notify: (intent: JsonObject) => void): void {
    this.#subscribers.set(key, { filter, notify });
  }

  /** Stops sending to `key`; what it was shown stays parked. */
  unsubscribe(key: object): boolean {
    return this.#subscribers.delete(key);
  }

  pending(): SupervisionIntent[] {
    return [...this.#parked.values()].map((p) => p.intent);
  }

  /**
   * Settles a parked intent. An unknown id — already decided, timed out, or
   * never parked — is an error, not a silent success: a supervisor that
   * believes it denied something must hear that the denial did not land.
   */
  decide(intentId: string, decision: SupervisionDecision): void {
    const parked = this.#parked.get(intentId);
    if (parked === undefined) {
      throw new CarError("not_found", `supervision intent '${intentId.slice(0, 80)}' is not parked: it was already decided, timed out, or never existed`);
    }
    parked.settle(decision);
  }

  /** The engine's supervisor for one session. */
  supervisorFor(sessionId: string, submitter: () => SubmitterInfo): Supervisor {
    return (request) => {
      // Costs nothing when unused: one empty-map read, no intent built.
      if (this.#subscribers.size === 0) return undefined;
      return this.#park(request, sessionId, submitter());
    };
  }

  #park(request: SupervisionRequest, sessionId: string, who: SubmitterInfo): ParkedProposal | undefined {
    const actions = request.proposal.actions.map((a) => intentAction(a, a.tool === undefined ? undefined : request.schemaOf(a.tool)));
    const reversibility = worstOf(actions);
    const tools = actions.flatMap((a) => (a.tool === undefined ? [] : [a.tool]));
    const subject = { tools, session_id: sessionId, agent_id: who.agent_id, reversibility };
    const watchers = [...this.#subscribers.values()].filter((s) => filterMatches(s.filter, subject));
    if (watchers.length === 0) return undefined;
    const intent: SupervisionIntent = {
      id: `intent-${++this.#seq}-${request.run_id.slice(-8)}`,
      proposal_id: request.proposal.id,
      source: who.source,
      session_id: sessionId,
      reversibility,
      created_at: rfc3339(Date.now()),
      actions,
    };
    const json = intentJson(intent);
    const bytes = Buffer.byteLength(JSON.stringify(json));
    try {
      who.held.take(bytes, "a parked supervision intent");
    } catch (err) {
      // Fail closed: a proposal the server cannot hold for its supervisor does not pass unsupervised.
      const reason = err instanceof Error ? err.message : String(err);
      return { intent_id: intent.id, record: json, decision: Promise.resolve({ kind: "deny", reviewer: "server", reason }) };
    }
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
      who.held.release(bytes);
      this.host.emit("supervision_decided", () => ({ intent_id: intent.id, proposal_id: intent.proposal_id, decision: d.kind, reviewer: d.reviewer }));
      settle(d);
    };
    this.#parked.set(intent.id, { intent, settle: finish });
    if (request.signal?.aborted === true) onAbort();
    else request.signal?.addEventListener("abort", onAbort, { once: true });
    this.host.emit("supervision_parked", () => ({ intent_id: intent.id, proposal_id: intent.proposal_id, session_id: sessionId }));
    for (const w of watchers) w.notify(json);
    return { intent_id: intent.id, record: recordOf(intent), decision };
  }
}

/** The audit record of a parked intent: the intent without its own id (the event carries it). */
function recordOf(intent: SupervisionIntent): JsonObject {
  const { id: _id, ...rest } = intent;
  return rest as unknown as JsonObject;
}
