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
import { RateLimiter } from "../tools/rate-limiter.ts";
import type { AgentSession } from "../runtime.ts";

/** The event that carries an agent's session-scoped trace steps: `data.agent` and `data.steps`. */
export const SESSION_TRACE_EVENT = "session_trace";

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
   */
  persist(agent: string): void {
    const entry = this.#agents.get(agent);
    if (this.#events === undefined || entry === undefined || entry.pending.length === 0) return;
    // The list is shared with the facts and the limiter: taken by copy, emptied in place.
    const steps = entry.pending.splice(0);
    try {
      this.#events.append({ kind: SESSION_TRACE_EVENT, proposal_id: null, timestamp: rfc3339(this.#clock.now()), data: { agent, steps } });
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
