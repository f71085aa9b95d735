/**
 * The CAR side of one connection: its own runtime (tools, policies, detached
 * tools, standing tier), the peer used to call back into the client, and the
 * ids it hands out. One client's tools and rules never reach another's. With
 * a server database, state, the event log, the approval ledger and postures
 * are the database's, shared by every session (docs/sessions.md: "What sessions
 * share"); without one the session's runtime keeps its own in memory.
 */
import { join } from "node:path";
import { CarError, type JsonValue, randomIds, shortId, systemClock } from "@car/ir";
import { AgentSessions, borrowedStore, Runtime, type ToolCaller } from "@car/engine";
import { DEFAULT_REPLAN_CONFIG, type ReplanConfig } from "@car/engine/planner";
import { postureWithDefault } from "./postures/default-posture.ts";
import type { Tracer } from "@opentelemetry/api";
import { ApprovalGate, type ApprovalLedger, type PermissionTier } from "@car/policy";
import { serverAdmission } from "./admission.ts";
import { callClientTool } from "./client-tool.ts";
import type { RpcPeer } from "./peer.ts";
import type { ServeStore } from "./serve-store.ts";
import type { HeldAccount, HeldBytes, HeldState } from "./held-bytes.ts";
import { type ServerLimits, Slots } from "./limits.ts";
import { SessionRules } from "./session-rules.ts";
import { PolicySessions } from "./policy-sessions.ts";
import { agentKeyOf } from "./auth.ts";
import type { RunHub, RunProducer, RunSubscriber } from "./runs/run-hub.ts";
import { RUNS_RESUME_CAPABILITY } from "./methods/runs.ts";
import type { Oversight } from "./supervision/oversight.ts";

export interface SessionOptions {
  /** Callback wait for actions that declare no `timeout_ms`. */
  toolTimeoutMs: number;
  /** The state directory; the operator's rules in `<carHome>/policies` apply to every session. */
  carHome: string;
  /** The server's database, shared by every session; undefined keeps each session in memory (`--db :memory:`). */
  store?: ServeStore | undefined;
  /** The agent this connection acts for (`?agent_id=` on the URL): its postures refine the approval gate. */
  agentId?: string | undefined;
  /** The tier every session starts at, and the most it can hold (`car serve --tier`). Default `sandbox_edit`. */
  standingTier?: PermissionTier | undefined;
  /** Traces every proposal of the session (`car serve --otel`). */
  tracer?: Tracer | undefined;
  /** What one connection may take (docs/operating.md: "Limits"). */
  limits: ServerLimits;
  /** Proposals running across the server, shared by every session. */
  serverProposals: Slots;
  /** Agent run traces (`runs.*`), shared by every connection of the server. */
  runs: RunHub;
  /** Every agent's session (trace facts, rate limits), shared by the agent's connections (DECISIONS §21). */
  agents: AgentSessions;
  /** Who this connection acts for (`agentKeyOf`): the key into `agents`. */
  agentKey: string;
  /** What all clients make the server hold (held-bytes.ts); each session gets an account of it. */
  heldBytes: HeldBytes;
  /** State values counted against the same pool, by key. */
  heldState: HeldState;
  /** The server's supervision gate, approvals that wait and host events, shared by every session. */
  oversight: Oversight;
}

export class Session implements RunSubscriber, RunProducer {
  /** Stamped as `session_id` on every `tools.execute` this connection receives. */
  readonly id: string = `sess-${shortId(randomIds)}`;
  runtime: Runtime;
  /** The approval gate every proposal of the session passes (DECISIONS §16), at the session's standing tier; rebuilt when `session.auth` binds an agent. */
  gate: ApprovalGate;
  /** Set by `session.auth { host_token }`: the host-management role, which may read every agent's run traces. */
  hostRole = false;
  /** Per-context policy sessions opened on this connection (`session.policy.open`). */
  readonly policySessions = new PolicySessions();
  /** The run `runs.start` last opened or adopted on this connection: proposals submitted after it are recorded as its turns. */
  currentRunId: string | undefined;
  private isolated = false;
  /** Which rules are the operator's (read-only) and which this connection registered (§19). */
  rules!: SessionRules;
  /** Proposals running on this connection. */
  readonly proposals: Slots;
  /** This connection's share of what the server holds for clients. */
  readonly held: HeldAccount;
  /** Set by a successful `server.handshake`. */
  negotiatedProtocol: number | undefined;
  /** The optional capabilities the handshake negotiated. */
  capabilities: ReadonlySet<string> = new Set();
  /** This session's replan loop (`replan.set_config`): off (`max_replans: 0`) until configured. */
  replan: ReplanConfig = DEFAULT_REPLAN_CONFIG;
  /**
   * The halt latch (reference websocket-core.md § A.7, DECISIONS §11): set
   * when a `tools.execute` answer is a terminal failure; while set, every
   * proposal on this connection is rejected whole and dispatches nothing.
   * Connection-local: a reconnect starts clear, and `session.clear_halt`
   * (an operator's connection, for itself) clears it.
   */
  halted = false;
  /** Where every proposal on this connection sends its tool calls: tools execute on the client. */
  readonly toolCaller: ToolCaller = (call, signal) => callClientTool(this, call, signal);
  private callbackSeq = 0;
  private streaming = false;

  constructor(
    readonly peer: RpcPeer,
    /** Fires when the connection closes or a shutdown cancels in-flight work. */
    readonly signal: AbortSignal,
    /** Replaced (without a store) when the session is isolated; read it afresh on every call. */
    public options: SessionOptions,
  ) {
    this.gate = this.buildGate(options.standingTier ?? "sandbox_edit");
    this.runtime = this.buildRuntime();
    this.proposals = new Slots(options.limits.maxProposalsPerConnection, "proposals running on this connection (--max-proposals-per-connection)");
    this.held = options.heldBytes.account(options.limits.maxHeldBytesPerConnection);
  }

  /**
   * Makes this session private (the `session.isolated.v1` capability): from
   * now on it behaves as a session of a `--db :memory:` server — its own
   * empty state, event log, approval ledger and session-scoped trace facts
   * and rate limits, gone at disconnect — while
   * the operator's policy files still apply. Only a session that has not
   * registered anything may switch, and never an agent's connection (its
   * posture lives in the shared database and must keep applying).
   */
  isolate(): void {
    if (this.options.store === undefined) return;
    if (this.options.agentId !== undefined) throw new CarError("unauthorized", "an agent connection cannot be isolated from the shared database");
    if (this.runtime.listTools().length > 0 || this.rules.ownCount > 0) {
      throw new CarError("invalid_params", "session.isolated.v1 must be negotiated before tools or policies are registered");
    }
    const shared = this.runtime;
    // Private all through: its session-scoped trace facts and rate-limit windows too (an agent's connection never gets here).
    this.options = { ...this.options, store: undefined, agents: new AgentSessions(systemClock) };
    this.isolated = true;
    this.runtime = this.buildRuntime();
    void shared.close();
  }

  /**
   * Binds this connection to an agent (`session.auth { agent_id }`), as
   * `?agent_id=` on the URL does: its proposals follow the agent's postures,
   * its session-scoped facts are the agent's, and it owns the agent's runs.
   * Only before the session holds anything of its own, and never to a
   * second agent or on an isolated session (an agent's posture lives in the
   * shared database).
   */
  bindAgent(agentId: string): void {
    if (this.options.agentId === agentId) return;
    if (this.options.agentId !== undefined) {
      throw new CarError("unauthorized", `this connection already acts for agent '${this.options.agentId}'; open another connection for '${agentId}'`);
    }
    if (this.isolated) throw new CarError("unauthorized", "an isolated session cannot be bound to an agent");
    if (this.runtime.listTools().length > 0 || this.rules.ownCount > 0 || this.proposals.used > 0) {
      throw new CarError("invalid_params", "session.auth with agent_id must come before tools, policies or proposals on this connection");
    }
    const shared = this.runtime;
    this.options = { ...this.options, agentId, agentKey: agentKeyOf(agentId, undefined) };
    this.gate = this.buildGate(this.gate.grantedTier);
    this.runtime = this.buildRuntime();
    void shared.close();
  }

  /** The approval gate at `tier`, for the agent this session acts for (its postures, with a database). */
  private buildGate(grantedTier: PermissionTier): ApprovalGate {
    const { store, agentId } = this.options;
    // The ledger of the session's runtime as it is now (`isolate` replaces the runtime): where `permission.approve` records.
    const ledger: ApprovalLedger = {
      record: (record) => this.runtime.approvals.record(record),
      latest: (fingerprint, now, scope) => this.runtime.approvals.latest(fingerprint, now, scope),
      consume: (record, now) => this.runtime.approvals.consume(record, now),
      list: () => this.runtime.approvals.list(),
    };
    return new ApprovalGate({
      ledger,
      sessionId: this.id,
      grantedTier,
      ...(agentId !== undefined ? { agentId } : {}),
      ...(store !== undefined && agentId !== undefined ? { posture: postureWithDefault(store.postures, agentId) } : {}),
    });
  }

  /** The session's runtime over its store (none: in memory), with the operator's policy files loaded and its rules' owners reset. */
  private buildRuntime(): Runtime {
    const { store } = this.options;
    const runtime = new Runtime({
      ...(store !== undefined ? { store: borrowedStore(store) } : {}),
      agent: this.options.agents.get(this.options.agentKey),
      approvalGate: this.gate,
      admission: serverAdmission(this),
      supervisor: this.#supervisor(),
      ...(this.options.tracer !== undefined ? { tracer: this.options.tracer } : {}),
      maxInterpolatedBytes: this.options.limits.maxInterpolatedBytesPerProposal,
    });
    // A malformed operator policy file throws `policy_load_failed` here: the connection is refused.
    runtime.loadPolicies(join(this.options.carHome, "policies"));
    this.rules = new SessionRules(runtime.policies, runtime.traceGate);
    return runtime;
  }

  /** A notification to this connection's client (`runs.trace.event`). */
  notify(method: string, params: JsonValue): void {
    this.peer.notify(method, params);
  }

  /** Whether a run this connection produces gets the resume lease when it goes (`runs.resume.v1`). */
  get resumable(): boolean {
    return this.capabilities.has(RUNS_RESUME_CAPABILITY);
  }

  /** Who submits on this connection, as approvals stamp a reviewer: `agent:<id>` or `conn:<session id>`. */
  get principal(): string {
    return this.options.agentId !== undefined ? `agent:${this.options.agentId}` : `conn:${this.id}`;
  }

  /** The server's supervision gate, for this session's proposals. */
  #supervisor() {
    return this.options.oversight.supervision.supervisorFor(this.id, () => ({ source: this.principal, agent_id: this.options.agentId, held: this.held }));
  }

  /** A fresh id for a server→client request on this connection. */
  nextCallbackId(prefix: string): string {
    this.callbackSeq += 1;
    return `${prefix}-${this.callbackSeq}`;
  }

  /**
   * Forwards every chunk of every detached tool on this runtime as a
   * `tools.stream.event` notification, until the connection ends. Idempotent:
   * returns false when already forwarding.
   */
  streamToolEvents(): boolean {
    if (this.streaming) return false;
    this.streaming = true;
    const feed = this.runtime.toolSubscribe(undefined, this.signal);
    void (async () => {
      // On the wire a handle is its id string, as `tools.poll` takes it.
      for await (const event of feed) this.peer.notify("tools.stream.event", { ...event, handle: event.handle.id } as unknown as JsonValue);
    })();
    return true;
  }

  /** Writes what this agent's session observed to the server's log, so it outlives a restart; `withCommit`: with the commit about to happen. */
  persistAgent(withCommit = false): void {
    this.options.agents.persist(this.options.agentKey, withCommit);
  }

  /** Whose state `state.set` values are counted under: the server's database, or this session's own memory. */
  get stateHolder(): object {
    return this.options.store ?? this.runtime.state;
  }

  close(reason: Error): void {
    this.options.runs.disconnect(this, this);
    this.peer.close(reason);
    this.held.close();
    if (this.options.store === undefined) this.options.heldState.forget(this.runtime.state);
    try {
      this.persistAgent();
    } catch {
      // Kept for the agent's next write; a closing connection has no one to tell.
    }
    void this.runtime.close();
  }
}
