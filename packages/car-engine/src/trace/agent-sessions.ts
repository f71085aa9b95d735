/**
 * A session is an agent, not a socket (DECISIONS §21). A host that runs a
 * runtime per connection (`car serve`) keeps one `AgentSession` per agent
 * identity here and hands it to each of that agent's runtimes
 * (`RuntimeOptions.agent`): its session-scoped trace facts and its tools'
 * rate-limit windows are then shared by concurrent connections and outlive
 * a reconnect. On a durable event log the trace facts also outlive a
 * restart: what the agent's runtimes observed is appended as
 * `session_trace` events (`persist`), and read back the first time the
 * agent is seen again — its rate-limit slots too (a `rate_slot` step: the
 * tool and when the slot was taken), so a restart does not hand the agent
 * a fresh window.
 */
import { rfc3339 } from "@car/ir";
import type { Clock, JsonObject, ToolRateLimit } from "@car/ir";
import { TraceFacts } from "@car/policy";
import type { TraceRecord } from "@car/policy";
import type { EventLog } from "../events/event-log.ts";
import { SESSION_TRACE_EVENT } from "../events/event-kinds.ts";
import { RateLimiter } from "../tools/rate-limiter.ts";

/** What one agent's runtimes share (see `RuntimeOptions.agent`). */
export interface AgentSession {
  /** Session-scoped trace facts (`@session` rules). */
  readonly trace: TraceFacts;
  /** Tool `rate_limit` windows. */
  readonly limiter: RateLimiter;
}

/** One step as stored: what the session's facts need (run ids are per run, and no run outlives a restart). */
interface StoredStep extends JsonObject {
  type: TraceRecord["type"];
  tool: string;
}

/** A rate-limit slot as stored: the tool, and when (ms since the epoch) the slot was taken. */
interface StoredSlot extends JsonObject {
  type: "rate_slot";
  tool: string;
  at: number;
}

/** The steps an agent's session observed and has not written to the log yet. */
type Pending = (StoredStep | StoredSlot)[];

/** Trace facts that also remember the steps not yet written to the log. */
class RecordedFacts extends TraceFacts {
  readonly #pending: Pending;

  constructor(pending: Pending) {
    super();
    this.#pending = pending;
  }

  override observe(record: TraceRecord): void {
    super.observe(record);
    const step: StoredStep = { type: record.type, tool: record.tool };
    if (record.type === "approved" && record.fingerprint !== undefined) step["fingerprint"] = record.fingerprint;
    this.#pending.push(step);
  }

  replay(step: StoredStep): void {
    super.observe({ ...step, run_id: "" } as TraceRecord);
  }
}

/** A rate limiter that also remembers the slots it handed out and has not written to the log yet. */
class RecordedLimiter extends RateLimiter {
  readonly #pending: Pending;

  constructor(pending: Pending) {
    super();
    this.#pending = pending;
  }

  override acquire(tool: string, limit: ToolRateLimit, now: number): number {
    const wait = super.acquire(tool, limit, now);
    if (wait === 0) this.#pending.push({ type: "rate_slot", tool, at: now });
    return wait;
  }
}

const STEP_TYPES: ReadonlySet<unknown> = new Set(["dispatched", "succeeded", "approved"]);

function isStep(value: unknown): value is StoredStep {
  const step = value as StoredStep | null;
  return typeof step === "object" && step !== null && STEP_TYPES.has(step.type) && typeof step.tool === "string";
}

function isSlot(value: unknown): value is StoredSlot {
  const slot = value as StoredSlot | null;
  return typeof slot === "object" && slot !== null && slot.type === "rate_slot" && typeof slot.tool === "string" && Number.isFinite(slot.at);
}

interface Entry {
  session: AgentSession;
  pending: Pending;
}

export class AgentSessions {
  readonly #events: EventLog | undefined;
  readonly #clock: Clock;
  readonly #agents = new Map<string, Entry>();

  /** `events`: a durable log to keep session facts in across restarts; without one they live as long as this object. */
  constructor(clock: Clock, events?: EventLog) {
    this.#clock = clock;
    this.#events = events;
  }

  /** The agent's session, made on first use (with its past read back from the log, when there is one). */
  get(agent: string): AgentSession {
    return this.#entry(agent).session;
  }

  /**
   * Appends the agent's steps observed since the last call as one
   * `session_trace` event. A failed write keeps them for the next call.
   *
   * A log that can `defer` (SQLite) is never asked for a transaction and a
   * sync to disk of their own — on the event loop, once per proposal.
   * `withCommit`: the host is about to commit a proposal, and the event
   * rides that commit's transaction and sync. Otherwise the log's group
   * write (`persist`) writes it now and syncs it with whatever else is being
   * synced; a reply that follows any later commit or dispatch intent waits
   * for a sync that covers it.
   */
  persist(agent: string, withCommit = false): void {
    const entry = this.#agents.get(agent);
    const log = this.#events;
    if (log === undefined || entry === undefined || entry.pending.length === 0) return;
    // The list is shared with the facts and the limiter: taken by copy, emptied in place.
    const steps = entry.pending.splice(0);
    const event = { kind: SESSION_TRACE_EVENT, proposal_id: null, timestamp: rfc3339(this.#clock.now()), data: { agent, steps } };
    if (log.defer !== undefined) {
      log.defer(event);
      if (!withCommit) groupWrite(log);
      return;
    }
    try {
      log.append(event);
    } catch (error) {
      entry.pending.unshift(...steps);
      throw error;
    }
  }

  #entry(agent: string): Entry {
    let entry = this.#agents.get(agent);
    if (entry !== undefined) return entry;
    const pending: Pending = [];
    const facts = new RecordedFacts(pending);
    const limiter = new RecordedLimiter(pending);
    if (this.#events !== undefined) {
      for (const event of this.#events.query({ kinds: [SESSION_TRACE_EVENT] })) {
        if (event.data["agent"] !== agent || !Array.isArray(event.data["steps"])) continue;
        for (const step of event.data["steps"]) {
          if (isStep(step)) facts.replay(step);
          else if (isSlot(step)) limiter.restore(step.tool, step.at);
        }
      }
    }
    entry = { session: { trace: facts, limiter }, pending };
    this.#agents.set(agent, entry);
    return entry;
  }
}

/** Starts the log's group write of what it buffered; a write that fails leaves the events buffered for the log's next write. */
function groupWrite(log: EventLog): void {
  try {
    const written = log.persist?.();
    if (written instanceof Promise) written.catch(() => undefined);
  } catch {
    // Still buffered: written with the log's next write.
  }
}
