/**
 * The adapter for any server speaking CAR's WebSocket JSON-RPC protocol
 * (`car serve`, or another implementation). Each scenario gets its own
 * connection — a session of its own on the server — authenticated with
 * `session.auth` when a token is given. The suite is the client: it
 * registers the scenario's tools and answers `tools.execute` with their
 * declared behaviours, honouring `tools.cancel` for calls the server gave up on.
 */
import { isJsonObject, type JsonObject, type JsonValue } from "@car/ir";
import type { ConformanceRuntime, RuntimeFactory, SubmitOutcome, SupervisedSubmit, SupervisedSubmitView, WaitingSubmit, WaitingSubmitView } from "./adapter.ts";
import type { ScenarioPolicy, ScenarioTool } from "./scenario.ts";
import type { ToolBehaviours, ToolCall } from "./tool-behaviours.ts";
import { SUITE_VERSION } from "./suite-info.ts";
import { RpcCallError, WsPeer, type RequestAnswer } from "./ws-peer.ts";

export interface WsAdapterOptions {
  /** `ws://host:port/` */
  url: string;
  /** Sent with `session.auth` as each connection's first call; none when absent (a server without auth). */
  token?: string | undefined;
  /** What the server declares it supports beyond the required capabilities (`--features`). */
  features?: readonly string[];
}

/**
 * The protocol capability that gives a connection a private, empty runtime
 * (state, event log, ledger). Requested as optional in `server.handshake`;
 * a server without it (or without the handshake) is used as it is, and the
 * runner reports any state that leaks into a scenario.
 */
export const ISOLATED_SESSION_CAPABILITY = "session.isolated.v1";

/** The wire protocol version RuntimeBench speaks (websocket-core.md, `server.handshake`). */
const PROTOCOL_VERSION = 3;

/** JSON-RPC "invalid params": the reference's code for a malformed proposal. */
const RPC_INVALID_PARAMS = -32602;
/** An application-defined server error code for a failing tool callback (as the reference's examples use). */
const TOOL_ERROR_CODE = -32000;

/** A fresh connection (session) per scenario. */
export function wsAdapter(options: WsAdapterOptions): RuntimeFactory {
  return {
    name: `WebSocket ${options.url}`,
    features: [...(options.features ?? [])],
    createRuntime: async () => {
      const peer = await WsPeer.connect(options.url);
      try {
        if (options.token !== undefined) await peer.call("session.auth", { token: options.token });
        await requestIsolation(peer);
      } catch (err) {
        await peer.close();
        throw err;
      }
      return new WsRuntime(peer, options);
    },
    destroyRuntime: (rt) => (rt as WsRuntime).close(),
  };
}

/** Asks for an isolated session; true when the server granted it. Only transport failures throw. */
async function requestIsolation(peer: WsPeer): Promise<boolean> {
  try {
    const answer = await peer.call("server.handshake", {
      protocol_version: PROTOCOL_VERSION,
      client_version: `RuntimeBench ${SUITE_VERSION}`,
      optional_capabilities: [ISOLATED_SESSION_CAPABILITY],
    });
    const negotiated = isJsonObject(answer) ? answer["negotiated_capabilities"] : undefined;
    return Array.isArray(negotiated) && negotiated.includes(ISOLATED_SESSION_CAPABILITY);
  } catch (err) {
    // No handshake, another protocol version, or a refusal: the session is simply not isolated.
    if (err instanceof RpcCallError) return false;
    throw err;
  }
}

/** A refusal's CAR code, else `invalid_proposal` for invalid params, else the JSON-RPC code as text. */
function codeOf(err: RpcCallError): string {
  const data = err.error.data;
  const carCode = isJsonObject(data) && typeof data["car_code"] === "string" ? data["car_code"] : undefined;
  return carCode ?? (err.error.code === RPC_INVALID_PARAMS ? "invalid_proposal" : String(err.error.code));
}

class WsRuntime implements ConformanceRuntime {
  readonly #peer: WsPeer;
  readonly #inflight = new Map<string, AbortController>();
  #behaviours: ToolBehaviours | undefined;
  /** Set once the scenario gates the session itself (`set_tier`): from then on it approves what it means to, and nothing else. */
  #scenarioGates = false;

  readonly #options: WsAdapterOptions;
  #sessionId: string | undefined;

  constructor(peer: WsPeer, options: WsAdapterOptions) {
    this.#peer = peer;
    this.#options = options;
    peer.onRequest("tools.execute", (params) => this.#execute(params));
    peer.onNotification("tools.cancel", (params) => {
      const id = isJsonObject(params) ? params["request_id"] : undefined;
      if (typeof id === "string") this.#inflight.get(id)?.abort();
    });
  }

  async #execute(raw: unknown): Promise<RequestAnswer> {
    const p = isJsonObject(raw) ? raw : {};
    const args = p["params"] ?? p["parameters"] ?? {};
    const requestId = typeof p["request_id"] === "string" ? p["request_id"] : undefined;
    const call: ToolCall = {
      tool: String(p["tool"]),
      params: isJsonObject(args) ? args : {},
      action_id: typeof p["action_id"] === "string" ? p["action_id"] : "",
    };
    if (requestId !== undefined) call.request_id = requestId;
    if (typeof p["attempt"] === "number") call.attempt = p["attempt"];
    if (typeof p["timeout_ms"] === "number") call.timeout_ms = p["timeout_ms"];
    if (typeof p["session_id"] === "string") call.session_id = p["session_id"];
    if (this.#behaviours === undefined) return { error: { code: TOOL_ERROR_CODE, message: `no behaviour for tool '${call.tool}'` } };
    const controller = new AbortController();
    if (requestId !== undefined) this.#inflight.set(requestId, controller);
    try {
      const reply = await this.#behaviours.play(call, controller.signal);
      switch (reply.kind) {
        case "output":
          return { result: reply.value };
        case "error":
          return {
            error: reply.terminal
              ? { code: TOOL_ERROR_CODE, message: reply.message, data: { terminal: true } }
              : { code: TOOL_ERROR_CODE, message: reply.message },
          };
        case "json_text":
          return { resultJsonText: reply.text };
        case "raw":
          // JSON-RPC cannot carry non-JSON; scenarios needing it declare the `raw_output` feature, which this adapter lacks.
          return { error: { code: TOOL_ERROR_CODE, message: "raw output cannot be sent over JSON-RPC" } };
        case "cancelled":
          return undefined;
      }
    } finally {
      if (requestId !== undefined) this.#inflight.delete(requestId);
    }
  }

  async registerTools(tools: readonly ScenarioTool[], behaviours: ToolBehaviours): Promise<void> {
    this.#behaviours = behaviours;
    await this.#peer.call(
      "tools.register",
      tools.map((t) => ({ ...(t.schema ?? {}), name: t.name })),
    );
  }

  async registerPolicy(policy: ScenarioPolicy): Promise<void> {
    await this.#peer.call("policy.register", policy);
  }

  async setState(state: JsonObject): Promise<void> {
    for (const [key, value] of Object.entries(state)) await this.#peer.call("state.set", { key, value });
  }

  /**
   * A server that gates every session (DECISIONS §16: `car serve`, the
   * reference daemon) rejects a proposal with an action above the standing
   * tier until an operator approves it. The scenarios are about what the
   * runtime does once a proposal is admitted, so the adapter approves what
   * `permission.pending` lists, as the operator would (in the isolated
   * session's own ledger). A server without the method is not gated. An
   * `approvals` scenario sets its own tier and expects rejections, so once
   * it has, nothing is approved on its behalf.
   */
  async #approvePending(proposal: JsonValue): Promise<void> {
    if (this.#scenarioGates) return;
    let pending: JsonValue;
    try {
      pending = (await this.#peer.call("permission.pending", { proposal })) as JsonValue;
    } catch (err) {
      if (err instanceof RpcCallError) return; // not gated, or a malformed proposal that submit reports itself
      throw err;
    }
    const rows = isJsonObject(pending) && Array.isArray(pending["pending"]) ? pending["pending"] : [];
    for (const row of rows) {
      if (!isJsonObject(row)) continue;
      await this.#peer.call("permission.approve", { fingerprint: row["fingerprint"] ?? null, required_tier: row["required"] ?? null });
    }
  }

  async submit(proposal: JsonValue): Promise<SubmitOutcome> {
    try {
      await this.#approvePending(proposal);
      return { result: (await this.#peer.call("proposal.submit", { proposal })) as JsonValue };
    } catch (err) {
      if (!(err instanceof RpcCallError)) throw err;
      return { error: { code: codeOf(err), message: err.error.message } };
    }
  }

  async verify(proposal: JsonValue, state?: JsonObject): Promise<JsonValue> {
    return (await this.#peer.call("verify", { proposal, ...(state === undefined ? {} : { initial_state: state }) })) as JsonValue;
  }

  async simulate(proposal: JsonValue, state?: JsonObject): Promise<JsonObject> {
    const result = await this.#peer.call("simulate", { proposal, ...(state === undefined ? {} : { initial_state: state }) });
    // `car serve` answers `{ state, skipped }`; a server answering the bare post-state is read as such.
    if (isJsonObject(result) && isJsonObject(result["state"]) && Array.isArray(result["skipped"])) return result["state"];
    if (!isJsonObject(result)) throw new Error(`simulate answered ${JSON.stringify(result)}, not a state object`);
    return result;
  }

  async equivalent(a: JsonValue, b: JsonValue, testStates?: JsonObject[]): Promise<boolean> {
    const result = await this.#peer.call("equivalent", { proposal_a: a, proposal_b: b, ...(testStates === undefined ? {} : { test_states: testStates }) });
    if (typeof result === "boolean") return result;
    if (isJsonObject(result) && typeof result["equivalent"] === "boolean") return result["equivalent"];
    throw new Error(`equivalent answered ${JSON.stringify(result)}, not a boolean`);
  }

  async optimize(proposal: JsonValue): Promise<JsonValue> {
    return (await this.#peer.call("optimize", { proposal })) as JsonValue;
  }

  async poll(handle: string): Promise<JsonValue> {
    return ((await this.#peer.call("tools.poll", { handle })) ?? null) as JsonValue;
  }

  async cancel(handle: string): Promise<JsonValue> {
    return (await this.#peer.call("tools.cancel", { handle })) as JsonValue;
  }

  /** `permission.set_tier` (the reference protocol's standing tier). */
  async setTier(tier: string): Promise<void> {
    this.#scenarioGates = true;
    await this.#peer.call("permission.set_tier", { tier });
  }

  /** `permission.approve` with the action, which the server fingerprints and classifies. */
  async approve(action: JsonValue): Promise<void> {
    await this.#peer.call("permission.approve", { action });
  }

  /** This connection's session id (`session.init`), for a supervisor's filter. */
  async #session(): Promise<string> {
    if (this.#sessionId !== undefined) return this.#sessionId;
    const answer = await this.#peer.call("session.init", { client_id: `RuntimeBench ${SUITE_VERSION}` });
    const id = isJsonObject(answer) ? answer["session_id"] : undefined;
    if (typeof id !== "string") throw new Error(`session.init answered ${JSON.stringify(answer)}, without a session_id`);
    return (this.#sessionId = id);
  }

  /** A second connection to the same server, authenticated and negotiated: an operator's (a supervisor). */
  async #operator(): Promise<WsPeer> {
    const peer = await WsPeer.connect(this.#options.url);
    try {
      if (this.#options.token !== undefined) await peer.call("session.auth", { token: this.#options.token });
      await peer.call("server.handshake", { protocol_version: PROTOCOL_VERSION, client_version: `RuntimeBench ${SUITE_VERSION}` });
      return peer;
    } catch (err) {
      await peer.close();
      throw err;
    }
  }

  async #submitRaw(params: JsonObject): Promise<SubmitOutcome> {
    try {
      return { result: (await this.#peer.call("proposal.submit", params)) as JsonValue };
    } catch (err) {
      if (!(err instanceof RpcCallError)) throw err;
      return { error: { code: codeOf(err), message: err.error.message } };
    }
  }

  /**
   * `supervision.subscribe` on a second connection, filtered to this
   * session; the proposal is submitted here (not pre-approved: what the
   * gate decides after an `allow` is part of what is checked).
   */
  async supervisedSubmit(step: SupervisedSubmit): Promise<SupervisedSubmitView> {
    const session = await this.#session();
    const supervisor = await this.#operator();
    let second: WsPeer | undefined;
    try {
      let shown: (intent: JsonObject) => void = () => {};
      const intentSeen = new Promise<JsonObject>((resolve) => {
        shown = resolve;
      });
      supervisor.onNotification("supervision.intent", (params) => {
        if (isJsonObject(params)) shown(params);
      });
      await supervisor.call("supervision.subscribe", { filter: { ...(step.filter ?? {}), sessions: [session] } });
      const submitted = this.#submitRaw({ proposal: step.proposal });
      // Either the proposal is parked (an intent arrives) or it is answered unparked.
      const first = await Promise.race([intentSeen.then((intent) => ({ intent })), submitted.then(() => ({ intent: null }))]);
      const intent = first.intent;
      let stillParked: boolean | undefined;
      if (intent !== null) {
        if (step.decision !== undefined) {
          await supervisor.call("supervision.decide", { intent_id: intent["id"] ?? null, decision: step.decision });
        } else {
          await supervisor.close();
          second = await this.#operator();
          const pending = await second.call("supervision.pending", {});
          const listed = isJsonObject(pending) && Array.isArray(pending["intents"]) ? pending["intents"] : [];
          stillParked = listed.some((i) => isJsonObject(i) && i["id"] === intent["id"]);
          await second.call("supervision.decide", { intent_id: intent["id"] ?? null, decision: { kind: "deny", reason: "the first supervisor left" } });
        }
      }
      const outcome = await submitted;
      let redecide: string | null = null;
      if (intent !== null) {
        try {
          await (second ?? supervisor).call("supervision.decide", { intent_id: intent["id"] ?? null, decision: { kind: "allow" } });
        } catch (err) {
          if (!(err instanceof RpcCallError)) throw err;
          redecide = codeOf(err);
        }
      }
      return { outcome, intent, redecide_error: redecide, ...(stillParked !== undefined ? { still_parked: stillParked } : {}) };
    } finally {
      await supervisor.close();
      await second?.close();
    }
  }

  /** `proposal.submit { …, wait_for_approval_ms }`, the wait read from `permission.pending` and answered on this connection (its ledger). */
  async waitingSubmit(step: WaitingSubmit): Promise<WaitingSubmitView> {
    const proposalId = isJsonObject(step.proposal) ? step.proposal["id"] : undefined;
    const submitted = this.#submitRaw({ proposal: step.proposal, wait_for_approval_ms: step.wait_for_approval_ms });
    let done = false;
    void submitted.finally(() => {
      done = true;
    });
    let row: JsonObject | undefined;
    while (!done && row === undefined) {
      const answer = await this.#peer.call("permission.pending", {});
      const rows = isJsonObject(answer) && Array.isArray(answer["pending"]) ? answer["pending"] : [];
      row = rows.find((r): r is JsonObject => isJsonObject(r) && r["proposal_id"] === proposalId);
      if (row === undefined) await new Promise((r) => setTimeout(r, 25));
    }
    const callsBefore = this.#behaviours?.calls.length ?? 0;
    if (row !== undefined && step.answer !== "none") {
      const method = step.answer === "approve" ? "permission.approve" : "permission.reject";
      await this.#peer.call(method, { fingerprint: row["fingerprint"] ?? null, required_tier: row["required"] ?? null });
    }
    return { outcome: await submitted, pending: row ?? null, calls_before_answer: callsBefore };
  }

  /**
   * `permission.evaluate` of a one-action proposal: the fingerprint the server's ledger keys the action on.
   * Its `dependencies` are dropped (they name actions this proposal lacks; an operation is its tool and parameters).
   */
  async fingerprint(action: JsonValue): Promise<string> {
    const alone = isJsonObject(action) ? { ...action, dependencies: [] } : action;
    const answer = await this.#peer.call("permission.evaluate", { proposal: { actions: [alone] } });
    const rows = isJsonObject(answer) && Array.isArray(answer["decisions"]) ? answer["decisions"] : [];
    const row = rows[0];
    if (!isJsonObject(row) || typeof row["fingerprint"] !== "string") throw new Error(`permission.evaluate answered ${JSON.stringify(answer)}, no fingerprint`);
    return row["fingerprint"];
  }

  async getState(): Promise<JsonObject> {
    const snapshot = await this.#peer.call("state.snapshot", {});
    if (!isJsonObject(snapshot)) throw new Error(`state.snapshot answered ${JSON.stringify(snapshot)}`);
    return snapshot;
  }

  async getEvents(): Promise<JsonObject[]> {
    const answer = await this.#peer.call("events.query", {});
    const events = isJsonObject(answer) ? answer["events"] : undefined;
    if (!Array.isArray(events)) throw new Error(`events.query answered ${JSON.stringify(answer)}`);
    // The protocol answers most recent first; observations read oldest first.
    return (events.filter(isJsonObject) as JsonObject[]).reverse();
  }

  async close(): Promise<void> {
    for (const c of this.#inflight.values()) c.abort();
    await this.#peer.close();
  }
}
