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
 *
 * With a `SharedOversight` (several servers on one PostgreSQL database) the
 * supervisors of every server count: their filters are mirrored here, each
 * intent this server parks is stored in the shared table, and a decision is
 * recorded there first — the first to land wins, wherever it was made — and
 * then released by this server, the one that parks the proposal, after it
 * reads the decision back from the table. A wake-up from another server
 * only makes this one read again.
 */
import { CarError, type JsonObject } from "@car/ir";
import {
  type FilterSubject,
  filterJson,
  filterMatches,
  filterSubject,
  type IntentFilter,
  intentActions,
  intentJson,
  intentRecord,
  type ParkedProposal,
  parseIntentFilter,
  type SharedIntentRow,
  type SharedOversight,
  type SharedSubscriber,
  type SupervisionDecision,
  type SupervisionIntent,
  type SupervisionRequest,
  type Supervisor,
  supervisionIntent,
} from "@car/engine";
import type { HeldAccount } from "../held-bytes.ts";
import type { HostEvents } from "./host-events.ts";

/** The reference's default: an intent nobody answers in 30 s is denied. */
export const DEFAULT_DECISION_TIMEOUT_MS = 30_000;

interface Subscriber {
  id: string;
  filter: IntentFilter;
  notify(intent: JsonObject): void;
}

interface Parked {
  intent: SupervisionIntent;
  /** Settles with a decision read from the shared table (or, alone, the one given). */
  settle(decision: SupervisionDecision): void;
  /** Resolves once the intent is in the shared table (at once without one). */
  stored: Promise<void>;
}

/** Who submits on a session: what the intent names and what a filter's `sessions` may match. */
export interface SubmitterInfo {
  source: string;
  agent_id: string | undefined;
  held: HeldAccount;
}

export class SupervisionHub {
  readonly #subscribers = new Map<object, Subscriber>();
  /** The other servers' supervisors' filters (shared oversight only). */
  #remote: IntentFilter[] = [];
  /** Insertion order is parking order: `pending` lists oldest first. */
  readonly #parked = new Map<string, Parked>();
  #seq = 0;
  #subscriberSeq = 0;

  constructor(
    readonly decisionTimeoutMs: number,
    private readonly host: HostEvents,
    private readonly shared?: SharedOversight,
  ) {}

  /** Supervisors on this server and, with shared oversight, on the others. */
  get supervisors(): number {
    return this.#subscribers.size + this.#remote.length;
  }

  /** Subscribes `key` (a connection) or replaces its filter; with shared oversight, resolves once the other servers can read it. */
  async subscribe(key: object, filter: IntentFilter, notify: (intent: JsonObject) => void): Promise<void> {
    const id = this.#subscribers.get(key)?.id ?? `supervisor-${++this.#subscriberSeq}`;
    this.#subscribers.set(key, { id, filter, notify });
    await this.shared?.setSubscriber({ subscriber_id: id, kind: "supervision", filter: filterJson(filter) as JsonObject });
  }

  /** Stops sending to `key`; what it was shown stays parked. */
  unsubscribe(key: object): boolean {
    const subscriber = this.#subscribers.get(key);
    if (subscriber === undefined) return false;
    this.#subscribers.delete(key);
    this.shared?.removeSubscriber(subscriber.id).catch(() => {});
    return true;
  }

  /** What waits, oldest first: this server's intents, or with shared oversight every live server's. */
  async pending(): Promise<JsonObject[]> {
    if (this.shared === undefined) return [...this.#parked.values()].map((p) => intentJson(p.intent));
    return (await this.shared.pending()).map((row) => row.intent);
  }

  /**
   * Settles a parked intent. An unknown id — already decided, timed out, or
   * never parked — is an error, not a silent success: a supervisor that
   * believes it denied something must hear that the denial did not land.
   */
  async decide(intentId: string, decision: SupervisionDecision): Promise<void> {
    const notWaiting = () =>
      new CarError("not_found", `supervision intent '${intentId.slice(0, 80)}' is not parked: it was already decided, timed out, or never existed`);
    const parked = this.#parked.get(intentId);
    if (this.shared === undefined) {
      if (parked === undefined) throw notWaiting();
      return parked.settle(decision);
    }
    // The table decides who was first; the server parking it (this one, or another woken by the table's notification) releases it.
    await parked?.stored;
    const row = await this.shared.decide(intentId, decision);
    if (row === undefined) throw notWaiting();
    this.#parked.get(intentId)?.settle(row.decision ?? decision);
  }

  /** The engine's supervisor for one session. */
  supervisorFor(sessionId: string, submitter: () => SubmitterInfo): Supervisor {
    return (request) => {
      // Costs nothing when unused: one empty-map read (and one empty-array read), no intent built.
      if (this.#subscribers.size === 0 && this.#remote.length === 0) return undefined;
      return this.#park(request, sessionId, submitter());
    };
  }

  #park(request: SupervisionRequest, sessionId: string, who: SubmitterInfo): ParkedProposal | undefined {
    const actions = intentActions(request);
    const subject = filterSubject(actions, sessionId, who.agent_id);
    const watchers = [...this.#subscribers.values()].filter((s) => filterMatches(s.filter, subject));
    if (watchers.length === 0 && !this.#remote.some((f) => filterMatches(f, subject))) return undefined;
    const seq = ++this.#seq;
    const id = this.shared === undefined ? `intent-${seq}-${request.run_id.slice(-8)}` : `intent-${seq}-${this.shared.serverId}-${request.run_id.slice(-8)}`;
    const intent = supervisionIntent(id, request.proposal.id, actions, { source: who.source, session_id: sessionId });
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
    const deadline = Date.now() + this.decisionTimeoutMs;
    const timer = setTimeout(
      () => void this.#decideHere(intent.id, { kind: "deny", reviewer: "timeout", reason: `no supervisor decided within ${this.decisionTimeoutMs} ms` }),
      this.decisionTimeoutMs,
    );
    const onAbort = (): void => void this.#decideHere(intent.id, { kind: "deny", reviewer: "cancelled", reason: "the submitting run was cancelled" });
    const finish = (d: SupervisionDecision): void => {
      if (!this.#parked.delete(intent.id)) return;
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      who.held.release(bytes);
      this.host.emit("supervision_decided", () => ({ intent_id: intent.id, proposal_id: intent.proposal_id, decision: d.kind, reviewer: d.reviewer }));
      settle(d);
    };
    // Shared: in the table before anyone is told, so a decision from any server finds it; a failure to store it denies (fail closed).
    const stored =
      this.shared === undefined
        ? Promise.resolve()
        : this.shared
            .park({ id: intent.id, agent_id: who.agent_id ?? null, intent: json }, deadline)
            .catch((err: unknown) =>
              finish({ kind: "deny", reviewer: "server", reason: `the intent could not be shared with the other servers: ${(err as Error).message}` }),
            );
    this.#parked.set(intent.id, { intent, settle: finish, stored });
    if (request.signal?.aborted === true) onAbort();
    else request.signal?.addEventListener("abort", onAbort, { once: true });
    this.host.emit("supervision_parked", () => ({ intent_id: intent.id, proposal_id: intent.proposal_id, session_id: sessionId }));
    for (const w of watchers) w.notify(json);
    return { intent_id: intent.id, record: intentRecord(intent), decision };
  }

  /**
   * This server's own verdict on an intent it parks (timeout, cancellation).
   * Shared: it is recorded like any decision, and when a supervisor's landed
   * first, that one is what the proposal gets; a table that cannot be
   * reached leaves the denial standing (fail closed).
   */
  async #decideHere(intentId: string, decision: SupervisionDecision): Promise<void> {
    const parked = this.#parked.get(intentId);
    if (parked === undefined) return;
    if (this.shared === undefined) return parked.settle(decision);
    try {
      await parked.stored;
      const mine = await this.shared.decide(intentId, decision, { atDeadline: true });
      if (mine !== undefined) return parked.settle(decision);
      parked.settle((await this.shared.read(intentId))?.decision ?? decision);
    } catch {
      parked.settle(decision);
    }
  }

  /** Another server says `intentId` was decided: if this server parks it, read the decision from the table and release it. */
  async wake(intentId: string): Promise<void> {
    const parked = this.#parked.get(intentId);
    if (parked === undefined || this.shared === undefined) return;
    await parked.stored;
    const row = await this.shared.read(intentId);
    // Gone from the table (swept while this server could not be reached): nobody can decide it any more, so it is denied.
    if (row === undefined) parked.settle({ kind: "deny", reviewer: "server", reason: "the intent is no longer in the shared table" });
    else if (row.decision !== undefined) parked.settle(row.decision);
  }

  /** Another server parked `intentId`: show it to this server's supervisors whose filter matches. */
  async remoteParked(intentId: string): Promise<void> {
    if (this.#subscribers.size === 0 || this.shared === undefined) return;
    const row = await this.shared.read(intentId);
    if (row === undefined || row.decision !== undefined) return;
    const subject = rowSubject(row);
    for (const s of this.#subscribers.values()) if (filterMatches(s.filter, subject)) s.notify(row.intent);
  }

  /** The other servers' supervisors, as the shared table lists them. */
  setRemote(subscribers: readonly SharedSubscriber[]): void {
    const filters: IntentFilter[] = [];
    for (const s of subscribers) {
      try {
        filters.push(parseIntentFilter(s.filter));
      } catch {
        // A filter this server cannot read watches everything: over-parking is safe, missing a supervisor is not.
        filters.push({});
      }
    }
    this.#remote = filters;
  }

  /** After a lost channel: every intent parked here is read again, as its decision's wake-up may have been missed. */
  async resync(): Promise<void> {
    await Promise.all([...this.#parked.keys()].map((id) => this.wake(id).catch(() => {})));
  }
}

/** What a filter looks at in an intent another server parked. */
function rowSubject(row: SharedIntentRow): FilterSubject {
  const intent = row.intent as unknown as Partial<SupervisionIntent>;
  const actions = Array.isArray(intent.actions) ? intent.actions : [];
  const subject = filterSubject(actions, typeof intent.session_id === "string" ? intent.session_id : null, row.agent_id);
  return typeof intent.reversibility === "string" ? { ...subject, reversibility: intent.reversibility } : subject;
}
