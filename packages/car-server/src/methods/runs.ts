/**
 * `runs.*`: agent run tracing (reference § Agent run tracing). A run is one
 * `runs.start` / `runs.complete` bracket around an agent loop, keyed by a
 * durable `run_id`; its trace lives in the server's store (runs/run-hub.ts)
 * and streams as `runs.trace.event`.
 *
 * Who may do what, checked here against the connection's binding, never a
 * caller-supplied id: reads and subscriptions need the run's owning agent
 * (`session.auth { agent_id }` or `?agent_id=`) or the host role
 * (`session.auth { host_token }`); writes (`record_turns`,
 * `record_model_turn`) need the owning agent alone. An unknown run and
 * someone else's run get the same answer, so no caller learns which ids exist.
 */
import { createHash, randomUUID } from "node:crypto";
import { canonicalJson, CarError, getOwn, isJsonObject, type JsonObject, type JsonValue } from "@car/ir";
import type { RunSummary } from "@car/engine";
import { RPC_CAPABILITY_MISMATCH, RpcFault } from "../jsonrpc.ts";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, optionalNumber, optionalString, paramsObject, requireString } from "../params.ts";
import { actionTurns, modelTurn } from "../runs/run-turn.ts";
import { listCursor, pageFields, pageLimit, readListCursor, recordCursor, refuseUnnegotiated, RUNS_PAGINATION_CAPABILITY } from "../runs/run-pages.ts";
import type { Session } from "../session.ts";

export const RUNS_RESUME_CAPABILITY = "runs.resume.v1";
export const RUNS_CANCEL_CAPABILITY = "runs.cancel.v1";

/** Longest `intent` / `outcome_description` / `agent_name` kept. */
const TEXT_MAX = 16 * 1024;
const KEY_MAX_BYTES = 128;
const REASON_MAX_BYTES = 1024;

function hub(ctx: MethodContext) {
  return ctx.session.options.runs;
}

function runId(p: JsonObject): string {
  const id = requireString(p, "run_id");
  if (id === "" || id.length > 256) throw invalidParams("run_id must be a non-empty string of at most 256 characters");
  return id;
}

function boundedText(p: JsonObject, key: string): string | undefined {
  const value = optionalString(p, key);
  if (value !== undefined && value.length > TEXT_MAX) throw invalidParams(`${key} is longer than ${TEXT_MAX} characters`);
  return value;
}

/** The same refusal for a run that does not exist and one the caller may not touch: no existence or owner oracle. */
function noSuchRun(run_id: string): CarError {
  return new CarError("not_found", `run '${run_id.slice(0, 256)}' not found`, { run_id });
}

/** Whether this connection may read `agent_id`'s runs: it acts for that agent, or holds the host role. */
function entitled(session: Session, agent_id: string): boolean {
  return session.options.agentId === agent_id || session.hostRole;
}

/** Whether this connection may write into the run: it acts for the owning agent (the host role is not enough). */
function owns(session: Session, run: RunSummary): boolean {
  return session.options.agentId !== undefined && session.options.agentId === run.agent_id;
}

function requireCapability(session: Session, capability: string, method: string): void {
  if (!session.capabilities.has(capability)) {
    throw new RpcFault(RPC_CAPABILITY_MISMATCH, `protocol capability mismatch: ${method} needs ${capability} negotiated in server.handshake`);
  }
}

function exactFields(p: JsonObject, allowed: readonly string[], method: string): void {
  const unknown = Object.keys(p).find((k) => !allowed.includes(k));
  if (unknown !== undefined) throw invalidParams(`${method} takes exactly { ${allowed.join(", ")} }: unknown field '${unknown.slice(0, 64)}'`);
}

/** The run's owner: the connection's agent, else one synthesised from `agent_name` (`name:<slug>`). */
function owningAgent(session: Session, p: JsonObject): string {
  const bound = session.options.agentId;
  const claimed = optionalString(p, "agent_id");
  if (claimed !== undefined && claimed !== bound) {
    throw new CarError(
      "unauthorized",
      bound === undefined
        ? `runs.start for agent '${claimed.slice(0, 128)}' needs a connection bound to it (session.auth { agent_id } or ?agent_id=)`
        : `this connection acts for agent '${bound}', not '${claimed.slice(0, 128)}'`,
    );
  }
  if (bound !== undefined) return bound;
  const name = boundedText(p, "agent_name");
  const slug = name
    ?.toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  if (slug !== undefined && slug !== "") return `name:${slug}`;
  throw invalidParams("runs.start needs an owning agent: bind the connection (session.auth { agent_id }) or give agent_name");
}

async function start(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const intent = boundedText(p, "intent");
  if (intent === undefined || intent === "") throw invalidParams("intent is required");
  const agent_id = owningAgent(ctx.session, p);
  const key = optionalString(p, "idempotency_key");
  if (key !== undefined && (key === "" || Buffer.byteLength(key, "utf8") > KEY_MAX_BYTES)) {
    throw invalidParams(`idempotency_key must be 1-${KEY_MAX_BYTES} bytes`);
  }
  const run_id = key ?? randomUUID();
  const started_at = hub(ctx).nowText();
  const record: JsonObject = { record: "started", run_id, agent_id, intent, client_id: ctx.session.id, timestamp: started_at };
  const agentName = boundedText(p, "agent_name");
  if (agentName !== undefined) record["agent_name"] = agentName;
  const outcome = boundedText(p, "outcome_description");
  if (outcome !== undefined) record["outcome_description"] = outcome;
  const { summary, created } = await hub(ctx).locked(run_id, () => hub(ctx).store.start({ run_id, agent_id, intent, started_at, record }));
  if (summary.agent_id !== agent_id) throw invalidParams("idempotency_key is already the id of another agent's run; choose another");
  // Current before the answer: a proposal sent right after the ack is recorded under this run.
  ctx.session.currentRunId = run_id;
  if (summary.status === "in_progress") hub(ctx).produce(run_id, ctx.session);
  if (created) hub(ctx).announceStart(summary, record);
  return { run_id, agent_id };
}

async function complete(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const run_id = runId(p);
  const outcome = getOwn(p, "outcome");
  if (!isJsonObject(outcome) || typeof outcome["status"] !== "string") {
    throw invalidParams("outcome must be an AgentOutcome { status, summary, evidence, metrics, timestamp }");
  }
  if (Buffer.byteLength(JSON.stringify(outcome), "utf8") > 256 * 1024) throw invalidParams("outcome is larger than 256 KiB");
  const run = await hub(ctx).store.get(run_id);
  const producing = hub(ctx).producerOf(run_id)?.id === ctx.session.id;
  if (run === undefined || !(owns(ctx.session, run) || producing)) throw noSuchRun(run_id);
  const ended = await hub(ctx).end(run_id, { record: "ended", termination: "outcome", outcome, timestamp: hub(ctx).nowText() }, "completed");
  if (!ended.ok) {
    if (ended.refused === "run_not_found") throw noSuchRun(run_id);
    throw new CarError("invalid_params", `run '${run_id}' already ended (${run.status}); a run reports one outcome`, { run_id, status: run.status });
  }
  if (ctx.session.currentRunId === run_id) ctx.session.currentRunId = undefined;
  return { run_id, ok: true };
}

function dropped(run_id: string, reason: string): JsonValue {
  return { run_id, base_index: 0, count: 0, ok: false, dropped: reason };
}

/** Appends turns the caller narrated, owner-binding only. */
async function appendOwned(ctx: MethodContext, run_id: string, turns: JsonObject[] | "turn_too_large"): Promise<JsonValue> {
  const run = await hub(ctx).store.get(run_id);
  if (run === undefined || !owns(ctx.session, run)) return dropped(run_id, "run_not_found");
  if (turns === "turn_too_large") return dropped(run_id, "turn_too_large");
  const outcome = await hub(ctx).append(run_id, run.agent_id, turns);
  if (!outcome.ok) return dropped(run_id, outcome.dropped);
  return { run_id, base_index: outcome.base_index, count: outcome.count, ok: true };
}

async function recordTurns(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const id = getOwn(p, "run_id");
  if (typeof id !== "string" || id === "") throw invalidParams("runs.record_turns requires { run_id, turns: [RunTurn] }: run_id must be a non-empty string");
  return appendOwned(ctx, runId(p), actionTurns(p, hub(ctx).nowText()));
}

async function recordModelTurn(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const run_id = runId(p);
  const turn = modelTurn(p, hub(ctx).nowText());
  return appendOwned(ctx, run_id, turn === "turn_too_large" ? turn : [turn]);
}

async function subscribe(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const paginated = ctx.session.capabilities.has(RUNS_PAGINATION_CAPABILITY);
  if (paginated) pageFields(p, ["run_id", "cursor", "limit"], "runs.subscribe");
  else refuseUnnegotiated(p, ["cursor", "limit"], "runs.subscribe");
  const from = paginated ? recordCursor(p, "runs.subscribe") : 0;
  const limit = paginated ? pageLimit(p, "runs.subscribe") : 0;
  const run_id = runId(p);
  const run = await hub(ctx).store.get(run_id);
  if (run === undefined || !entitled(ctx.session, run.agent_id)) throw noSuchRun(run_id);
  const { turns, status } = await hub(ctx).subscribe(run, ctx.session);
  if (!paginated) return { run_id, agent_id: run.agent_id, turns_so_far: turns, cursor: turns.length, status };
  // Paginated: one page of the snapshot from `cursor`; the stream still starts after the whole snapshot (`cursor`),
  // and `next_cursor` says where the next page of turns begins (null once the page reaches the stream).
  const page = turns.slice(from, from + limit);
  const next = from + page.length;
  return { run_id, agent_id: run.agent_id, turns_so_far: page, cursor: turns.length, status, next_cursor: next < turns.length ? next : null };
}

function unsubscribe(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const run_id = runId(paramsObject(params));
  return { run_id, removed: hub(ctx).unsubscribe(run_id, ctx.session) };
}

async function list(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const agent_id = requireString(p, "agent_id");
  // The agent id is an authorization subject, checked before anything is read.
  if (!entitled(ctx.session, agent_id)) {
    throw new CarError("unauthorized", "runs.list: this connection may list only the runs of the agent it acts for (or hold the host role)");
  }
  if (!ctx.session.capabilities.has(RUNS_PAGINATION_CAPABILITY)) {
    refuseUnnegotiated(p, ["cursor", "limit"], "runs.list");
    const runs = await hub(ctx).store.list(agent_id);
    return { agent_id, runs: runs as unknown as JsonValue };
  }
  pageFields(p, ["agent_id", "cursor", "limit"], "runs.list");
  const after = readListCursor(p);
  const limit = pageLimit(p, "runs.list");
  // One more than the page tells whether another page follows without a second read.
  const rows = await hub(ctx).store.listPage(agent_id, after, limit + 1);
  const runs = rows.slice(0, limit);
  const next_cursor = rows.length > limit ? listCursor(runs[runs.length - 1]!) : null;
  return { agent_id, runs: runs as unknown as JsonValue, next_cursor };
}

async function getTrace(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const run_id = runId(p);
  const paginated = ctx.session.capabilities.has(RUNS_PAGINATION_CAPABILITY);
  if (paginated) pageFields(p, ["run_id", "cursor", "limit"], "runs.get_trace");
  else refuseUnnegotiated(p, ["limit"], "runs.get_trace");
  const cursor = paginated ? recordCursor(p, "runs.get_trace") : (optionalNumber(p, "cursor") ?? 0);
  if (!Number.isInteger(cursor) || cursor < 0) throw invalidParams("cursor must be a non-negative integer");
  const limit = paginated ? pageLimit(p, "runs.get_trace") : undefined;
  const run = await hub(ctx).store.get(run_id);
  if (run === undefined) return { run_id, not_found: true };
  if (!entitled(ctx.session, run.agent_id)) throw new CarError("unauthorized", `runs.get_trace: not entitled to run '${run_id.slice(0, 256)}'`);
  if (limit === undefined) return { run_id, agent_id: run.agent_id, records: await hub(ctx).store.records(run_id, cursor), cursor };
  const rows = await hub(ctx).store.records(run_id, cursor, limit + 1);
  const records = rows.slice(0, limit);
  return { run_id, agent_id: run.agent_id, records, cursor, next_cursor: rows.length > limit ? cursor + limit : null };
}

async function resume(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  exactFields(p, ["run_id"], "runs.resume");
  requireCapability(ctx.session, RUNS_RESUME_CAPABILITY, "runs.resume");
  const run_id = runId(p);
  return hub(ctx).locked(run_id, async () => {
    const run = await hub(ctx).store.get(run_id);
    if (run === undefined || !owns(ctx.session, run)) throw noSuchRun(run_id);
    if (run.status !== "in_progress") throw new CarError("invalid_params", `run '${run_id}' already ended (${run.status}); a terminal run is never reopened`);
    const from = hub(ctx).orphanedFrom(run_id);
    if (from === undefined) {
      throw new CarError(
        "invalid_params",
        hub(ctx).producerOf(run_id) !== undefined
          ? `run '${run_id}' still has a live producer; only an absent owner's run can be resumed`
          : `run '${run_id}' has no resume lease (the lease is not kept across a restart)`,
      );
    }
    hub(ctx).produce(run_id, ctx.session);
    ctx.session.currentRunId = run_id;
    return { run_id, agent_id: run.agent_id, client_id: ctx.session.id, resumed_from_client_id: from };
  });
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function cancelText(p: JsonObject, key: string, max: number): string {
  const value = requireString(p, key);
  if (value === "" || Buffer.byteLength(value, "utf8") > max) throw invalidParams(`${key} must be 1-${max} bytes`);
  return value;
}

async function cancel(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  exactFields(p, ["run_id", "idempotency_key", "reason"], "runs.cancel");
  requireCapability(ctx.session, RUNS_CANCEL_CAPABILITY, "runs.cancel");
  const run_id = runId(p);
  const idempotency_key = cancelText(p, "idempotency_key", KEY_MAX_BYTES);
  const reason_digest = sha256(cancelText(p, "reason", REASON_MAX_BYTES));
  const session = ctx.session;
  return hub(ctx).locked(run_id, async () => {
    const run = await hub(ctx).store.get(run_id);
    if (run === undefined || !(owns(session, run) || session.hostRole)) throw noSuchRun(run_id);
    const principal = owns(session, run) ? `agent:${run.agent_id}` : "host";
    const cancellation = { idempotency_key, reason_digest, principal };
    let status: "cancelled_confirmed" | "already_terminal";
    let ended: JsonObject | undefined;
    if (run.status === "in_progress") {
      const live = hub(ctx).producerOf(run_id) !== undefined;
      if (!live && principal !== "host") throw new CarError("invalid_params", "run cancellation control is unavailable");
      // With its producer live, ending the run stops it (every later append is refused); without, a host closes the orphan as Incomplete.
      const record: JsonObject = live
        ? { record: "ended", termination: "cancelled", cancellation, timestamp: hub(ctx).nowText() }
        : { record: "ended", termination: "incomplete", cancellation, timestamp: hub(ctx).nowText() };
      const outcome = await hub(ctx).store.end(run_id, record, live ? "cancelled" : "incomplete", hub(ctx).nowText());
      if (!outcome.ok) throw noSuchRun(run_id);
      hub(ctx).afterEnd(run_id, outcome.summary, record);
      status = live ? "cancelled_confirmed" : "already_terminal";
      ended = record;
    } else {
      ended = (await hub(ctx).store.records(run_id, 0)).find((r) => r["record"] === "ended");
      const same = isJsonObject(ended?.["cancellation"]) && canonicalJson(ended["cancellation"]) === canonicalJson(cancellation);
      status = same && ended?.["termination"] === "cancelled" ? "cancelled_confirmed" : "already_terminal";
    }
    const receipt: JsonObject = {
      receipt_version: 1,
      run_id,
      idempotency_key,
      reason_digest,
      principal,
      status,
      terminal_digest: ended === undefined ? null : sha256(canonicalJson(ended)),
      action_id: null,
      request_id: null,
    };
    receipt["receipt_digest"] = sha256(canonicalJson(receipt));
    return receipt;
  });
}

export const runMethods: MethodTable = {
  "runs.start": agentMethod(start),
  "runs.complete": agentMethod(complete),
  "runs.record_turns": agentMethod(recordTurns),
  "runs.record_model_turn": agentMethod(recordModelTurn),
  "runs.subscribe": agentMethod(subscribe),
  "runs.unsubscribe": agentMethod(unsubscribe),
  "runs.list": agentMethod(list),
  "runs.get_trace": agentMethod(getTrace),
  "runs.resume": agentMethod(resume),
  "runs.cancel": agentMethod(cancel),
};
