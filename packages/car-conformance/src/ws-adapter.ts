/**
 * The adapter for any server speaking CAR's WebSocket JSON-RPC protocol
 * (`car serve`, or another implementation). Each scenario gets its own
 * connection — a session of its own on the server — authenticated with
 * `session.auth` when a token is given. The suite is the client: it
 * registers the scenario's tools and answers `tools.execute` with their
 * declared behaviours, honouring `tools.cancel` for calls the server gave up on.
 */
import { CarClient, CarRpcError, NO_ANSWER, RawResult, ReplyError } from "@car/client";
import { isJsonObject, type JsonObject, type JsonValue } from "@car/ir";
import type { ConformanceRuntime, RuntimeFactory, SubmitOutcome, SupervisedSubmit, SupervisedSubmitView, WaitingSubmit, WaitingSubmitView } from "./adapter.ts";
import type { ScenarioPolicy, ScenarioTool } from "./scenario.ts";
import type { ToolBehaviours, ToolCall } from "./tool-behaviours.ts";
import { SUITE_VERSION } from "./suite-info.ts";

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
      const peer = await CarClient.open(options.url, { connectTimeoutMs: 10_000, ws: { maxPayload: 64 * 1024 * 1024 } });
      try {
        if (options.token !== undefined) await peer.request("session.auth", { token: options.token });
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
async function requestIsolation(peer: CarClient): Promise<boolean> {
  try {
    const answer = await peer.request("server.handshake", {
      protocol_version: PROTOCOL_VERSION,
      client_version: `RuntimeBench ${SUITE_VERSION}`,
      optional_capabilities: [ISOLATED_SESSION_CAPABILITY],
    });
    const negotiated = isJsonObject(answer) ? answer["negotiated_capabilities"] : undefined;
    return Array.isArray(negotiated) && negotiated.includes(ISOLATED_SESSION_CAPABILITY);
  } catch (err) {
    // No handshake, another protocol version, or a refusal: the session is simply not isolated.
    if (err instanceof CarRpcError) return false;
    throw err;
  }
}

/** A refusal's CAR code, else `invalid_proposal` for invalid params, else the JSON-RPC code as text. */
function codeOf(err: CarRpcError): string {
  const data = err.data;
  const carCode = isJsonObject(data) && typeof data["car_code"] === "string" ? data["car_code"] : undefined;
  return carCode ?? (err.rpcCode === RPC_INVALID_PARAMS ? "invalid_proposal" : String(err.rpcCode));
}

class WsRuntime implements ConformanceRuntime {
  readonly #peer: CarClient;
  readonly #inflight = new Map<string, AbortController>();
  #behaviours: ToolBehaviours | undefined;
  /** Set once the scenario gates the session itself (`set_tier`): from then on it approves what it means to, and nothing else. */
  #scenarioGates = false;
  readonly #options: WsAdapterOptions;
  #sessionId: string | undefined;

  constructor(peer: CarClient, options: WsAdapterOptions) {
    this.#peer = peer;
    this.#options = options;
    peer.onRequest("tools.execute", (params) => this.#execute(params));
    peer.onNotification("tools.cancel", (params) => {
      const id = isJsonObject(params) ? params["request_id"] : undefined;
      if (typeof id === "string") this.#inflight.get(id)?.abort();
    });
  }

  /** Plays the tool's declared behaviour: its output, a tool error (-32000, `terminal` when it is one), raw JSON text, or no answer. */
  async #execute(raw: unknown): Promise<JsonValue | RawResult | typeof NO_ANSWER> {
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
    if (this.#behaviours === undefined) throw new ReplyError(TOOL_ERROR_CODE, `no behaviour for tool '${call.tool}'`);
    const controller = new AbortController();
    if (requestId !== undefined) this.#inflight.set(requestId, controller);
    let reply: Awaited<ReturnType<ToolBehaviours["play"]>>;
    try {
      reply = await this.#behaviours.play(call, controller.signal);
    } finally {
      if (requestId !== undefined) this.#inflight.delete(requestId);
    }
    switch (reply.kind) {
      case "output":
        return reply.value;
      case "error":
        throw reply.terminal ? new ReplyError(TOOL_ERROR_CODE, reply.message, { terminal: true }) : new ReplyError(TOOL_ERROR_CODE, reply.message);
      case "json_text":
        return new RawResult(reply.text);
      case "raw":
        // JSON-RPC cannot carry non-JSON; scenarios needing it declare the `raw_output` feature, which this adapter lacks.
        throw new ReplyError(TOOL_ERROR_CODE, "raw output cannot be sent over JSON-RPC");
      case "cancelled":
        return NO_ANSWER;
    }
  }

  async registerTools(tools: readonly ScenarioTool[], behaviours: ToolBehaviours): Promise<void> {
    this.#behaviours = behaviours;
    await this.#peer.request(
      "tools.register",
      tools.map((t) => ({ ...(t.schema ?? {}), name: t.name })),
    );
  }

  async registerPolicy(policy: ScenarioPolicy): Promise<void> {
    await this.#peer.request("policy.register", policy);
  }

  async setState(state: JsonObject): Promise<void> {
    for (const [key, value] of Object.entries(state)) await this.#peer.request("state.set", { key, value });
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
      pending = (await this.#peer.request("permission.pending", { proposal })) as JsonValue;
    } catch (err) {
      if (err instanceof CarRpcError) return; // not gated, or a malformed proposal that submit reports itself
      throw err;
    }
    const rows = isJsonObject(pending) && Array.isArray(pending["pending"]) ? pending["pending"] : [];
    for (const row of rows) {
      if (!isJsonObject(row)) continue;
      await this.#peer.request("permission.approve", { fingerprint: row["fingerprint"] ?? null, required_tier: row["required"] ?? null });
    }
  }

  async submit(proposal: JsonValue): Promise<SubmitOutcome> {
    try {
      await this.#approvePending(proposal);
      return { result: (await this.#peer.request("proposal.submit", { proposal })) as JsonValue };
    } catch (err) {
      if (!(err instanceof CarRpcError)) throw err;
      // The server's own CAR code when it names one; a bare -32602 from another server is a malformed proposal.
      return { error: { code: codeOf(err), message: err.message } };
    }
  }

  async verify(proposal: JsonValue, state?: JsonObject): Promise<JsonValue> {
    return (await this.#peer.request("verify", { proposal, ...(state === undefined ? {} : { initial_state: state }) })) as JsonValue;
  }

  async simulate(proposal: JsonValue, state?: JsonObject): Promise<JsonObject> {
    const result = await this.#peer.request("simulate", { proposal, ...(state === undefined ? {} : { initial_state: state }) });
    // `car serve` answers `{ state, skipped }`; a server answering the bare post-state is read as such.
    if (isJsonObject(result) && isJsonObject(result["state"]) && Array.isArray(result["skipped"])) return result["state"];
    if (!isJsonObject(result)) throw new Error(`simulate answered ${JSON.stringify(result)}, not a state object`);
    return result;
  }

  async equivalent(a: JsonValue, b: JsonValue, testStates?: JsonObject[]): Promise<boolean> {
    const result = await this.#peer.request("equivalent", { proposal_a: a, proposal_b: b, ...(testStates === undefined ? {} : { test_states: testStates }) });
    if (typeof result === "boolean") return result;
    if (isJsonObject(result) && typeof result["equivalent"] === "boolean") return result["equivalent"];
    throw new Error(`equivalent answered ${JSON.stringify(result)}, not a boolean`);
  }

  async optimize(proposal: JsonValue): Promise<JsonValue> {
    return (await this.#peer.request("optimize", { proposal })) as JsonValue;
  }

  async poll(handle: string): Promise<JsonValue> {
    return ((await this.#peer.request("tools.poll", { handle })) ?? null) as JsonValue;
  }

  async cancel(handle: string): Promise<JsonValue> {
    return (await this.#peer.request("tools.cancel", { handle })) as JsonValue;
  }

  /** `permission.set_tier` (the reference protocol's standing tier). */
  async setTier(tier: string): Promise<void> {
    this.#scenarioGates = true;
    await this.#peer.request("permission.set_tier", { tier });
  }

  /** `permission.approve` with the action, which the server fingerprints and classifies. */
  async approve(action: JsonValue): Promise<void> {
    await this.#peer.request("permission.approve", { action });
  }

  /** This connection's session id (`session.init`), for a supervisor's filter. */
  async #session(): Promise<string> {
    if (this.#sessionId !== undefined) return this.#sessionId;
    const answer = await this.#peer.request("session.init", { client_id: `RuntimeBench ${SUITE_VERSION}` });
    const id = isJsonObject(answer) ? answer["session_id"] : undefined;
    if (typeof id !== "string") throw new Error(`session.init answered ${JSON.stringify(answer)}, without a session_id`);
    return (this.#sessionId = id);
  }

  /** A second connection to the same server, authenticated and negotiated: an operator's (a supervisor). */
  async #operator(): Promise<CarClient> {
    const peer = await CarClient.open(this.#options.url, { connectTimeoutMs: 10_000, ws: { maxPayload: 64 * 1024 * 1024 } });
    try {
      if (this.#options.token !== undefined) await peer.request("session.auth", { token: this.#options.token });
      await peer.request("server.handshake", { protocol_version: PROTOCOL_VERSION, client_version: `RuntimeBench ${SUITE_VERSION}` });
      return peer;
    } catch (err) {
      await peer.close();
      throw err;
    }
  }

  async #submitRaw(params: JsonObject): Promise<SubmitOutcome> {
    try {
      return { result: (await this.#peer.request("proposal.submit", params)) as JsonValue };
    } catch (err) {
      if (!(err instanceof CarRpcError)) throw err;
      return { error: { code: codeOf(err), message: err.message } };
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
    let second: CarClient | undefined;
    try {
      let shown: (intent: JsonObject) => void = () => {};
      const intentSeen = new Promise<JsonObject>((resolve) => {
        shown = resolve;
      });
      supervisor.onNotification("supervision.intent", (params) => {
        if (isJsonObject(params)) shown(params);
      });
      await supervisor.request("supervision.subscribe", { filter: { ...(step.filter ?? {}), sessions: [session] } });
      const submitted = this.#submitRaw({ proposal: step.proposal });
      // Either the proposal is parked (an intent arrives) or it is answered unparked.
      const first = await Promise.race([intentSeen.then((intent) => ({ intent })), submitted.then(() => ({ intent: null }))]);
      const intent = first.intent;
      let stillParked: boolean | undefined;
      if (intent !== null) {
        if (step.decision !== undefined) {
          await supervisor.request("supervision.decide", { intent_id: intent["id"] ?? null, decision: step.decision });
        } else {
          await supervisor.close();
          second = await this.#operator();
          const pending = await second.request("supervision.pending", {});
          const listed = isJsonObject(pending) && Array.isArray(pending["intents"]) ? pending["intents"] : [];
          stillParked = listed.some((i) => isJsonObject(i) && i["id"] === intent["id"]);
          await second.request("supervision.decide", { intent_id: intent["id"] ?? null, decision: { kind: "deny", reason: "the first supervisor left" } });
        }
      }
      const outcome = await submitted;
      let redecide: string | null = null;
      if (intent !== null) {
        try {
          await (second ?? supervisor).request("supervision.decide", { intent_id: intent["id"] ?? null, decision: { kind: "allow" } });
        } catch (err) {
          if (!(err instanceof CarRpcError)) throw err;
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
      const answer = await this.#peer.request("permission.pending", {});
      const rows = isJsonObject(answer) && Array.isArray(answer["pending"]) ? answer["pending"] : [];
      row = rows.find((r): r is JsonObject => isJsonObject(r) && r["proposal_id"] === proposalId);
      if (row === undefined) await new Promise((r) => setTimeout(r, 25));
    }
    const callsBefore = this.#behaviours?.calls.length ?? 0;
    if (row !== undefined && step.answer !== "none") {
      const method = step.answer === "approve" ? "permission.approve" : "permission.reject";
      await this.#peer.request(method, { fingerprint: row["fingerprint"] ?? null, required_tier: row["required"] ?? null });
    }
    return { outcome: await submitted, pending: row ?? null, calls_before_answer: callsBefore };
  }

  /**
   * `permission.evaluate` of a one-action proposal: the fingerprint the server's ledger keys the action on.
   * Its `dependencies` are dropped (they name actions this proposal lacks; an operation is its tool and parameters).
   */
  async fingerprint(action: JsonValue): Promise<string> {
    const alone = isJsonObject(action) ? { ...action, dependencies: [] } : action;
    const answer = await this.#peer.request("permission.evaluate", { proposal: { actions: [alone] } });
    const rows = isJsonObject(answer) && Array.isArray(answer["decisions"]) ? answer["decisions"] : [];
    const row = rows[0];
    if (!isJsonObject(row) || typeof row["fingerprint"] !== "string") throw new Error(`permission.evaluate answered ${JSON.stringify(answer)}, no fingerprint`);
    return row["fingerprint"];
  }

  async getState(): Promise<JsonObject> {
    const snapshot = await this.#peer.request("state.snapshot", {});
    if (!isJsonObject(snapshot)) throw new Error(`state.snapshot answered ${JSON.stringify(snapshot)}`);
    return snapshot;
  }

  async getEvents(): Promise<JsonObject[]> {
    const answer = await this.#peer.request("events.query", {});
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
