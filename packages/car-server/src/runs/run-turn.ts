/**
 * The turns a client narrates (`runs.record_turns`, `runs.record_model_turn`)
 * as the daemon stores them. The daemon validates shape, size and ownership
 * only, never turn semantics, and never trusts client truncation for what
 * lands on disk: long strings are cut to ~16 KB with a marker, a turn whose
 * encoding still passes 256 KiB has its free-form fields replaced by a
 * marker, and one that is too large even then is refused
 * (`turn_too_large`) with its whole batch.
 */
import { CarError, getOwn, isJsonObject, type JsonObject, type JsonValue } from "@car/ir";
import { redactSecrets } from "./redact.ts";

/** Longest string field kept whole. */
export const TURN_FIELD_MAX_BYTES = 16 * 1024;
/** Largest encoded turn stored (a small reserve is kept for the index the store stamps). */
export const TURN_MAX_BYTES = 256 * 1024 - 64;
/** Most turns per `runs.record_turns` call. */
export const TURN_BATCH_MAX = 256;

const TRUNCATED = "…[truncated]";
const TURN_REPLACED = "…[truncated: turn exceeded 256 KiB]";

/** The fields a `RunTurn` may carry (`index` is accepted and ignored: the daemon owns it). */
const TURN_FIELDS = new Set(["index", "prompt", "tool", "parameters", "output", "cli_outcome", "verifier_verdict", "policy_rejected"]);

const USAGE_FIELDS = ["prompt_tokens", "completion_tokens", "total_tokens", "context_window", "cache_read_input_tokens", "cache_creation_input_tokens"];

const RECORD_TURNS_SHAPE = "runs.record_turns requires { run_id, turns: [RunTurn] }";

function malformed(detail: string): CarError {
  return new CarError("invalid_params", `invalid params: ${RECORD_TURNS_SHAPE}: ${detail}`);
}

/** Cuts every string longer than the field cap, at any depth. */
function capStrings(value: JsonValue): JsonValue {
  if (typeof value === "string") {
    if (Buffer.byteLength(value, "utf8") <= TURN_FIELD_MAX_BYTES) return value;
    return (
      Buffer.from(value, "utf8")
        .subarray(0, TURN_FIELD_MAX_BYTES)
        .toString("utf8")
        .replace(/\uFFFD$/, "") + TRUNCATED
    );
  }
  if (Array.isArray(value)) return value.map(capStrings);
  if (isJsonObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, capStrings(v)]));
  return value;
}

/** An action turn the server recorded itself (a proposal's tool call), bounded like a narrated one. */
export function boundTurn(turn: JsonObject): JsonObject | undefined {
  return bounded(turn, ["parameters", "output", "prompt"]);
}

/** `turn` bounded to the per-turn cap, or undefined when even its free-form fields' replacement leaves it too large. */
function bounded(turn: JsonObject, freeForm: readonly string[]): JsonObject | undefined {
  const capped = capStrings(turn) as JsonObject;
  if (Buffer.byteLength(JSON.stringify(capped), "utf8") <= TURN_MAX_BYTES) return capped;
  for (const field of freeForm) if (field in capped) capped[field] = TURN_REPLACED;
  return Buffer.byteLength(JSON.stringify(capped), "utf8") <= TURN_MAX_BYTES ? capped : undefined;
}

function optionalField(turn: JsonObject, key: string, type: "string" | "boolean", at: string): void {
  const value = getOwn(turn, key);
  if (value !== undefined && value !== null && typeof value !== type) throw malformed(`${at}.${key} must be a ${type}`);
}

/**
 * A `runs.record_turns` batch as stored (`record: "turn"`, `verifier_verdict`
 * defaulting to `not_run`, `recorded_at`), or `turn_too_large`. A malformed
 * batch is an `invalid_params` error.
 */
export function actionTurns(params: JsonObject, recordedAt: string): JsonObject[] | "turn_too_large" {
  const turns = getOwn(params, "turns");
  if (!Array.isArray(turns) || turns.length === 0) throw malformed("turns must be a non-empty array");
  if (turns.length > TURN_BATCH_MAX) throw malformed(`a batch holds at most ${TURN_BATCH_MAX} turns, got ${turns.length}`);
  const out: JsonObject[] = [];
  for (const [i, turn] of turns.entries()) {
    const at = `turns[${i}]`;
    if (!isJsonObject(turn)) throw malformed(`${at} must be an object`);
    const unknown = Object.keys(turn).find((k) => !TURN_FIELDS.has(k));
    if (unknown !== undefined) throw malformed(`${at} has an unknown field '${unknown.slice(0, 64)}'`);
    for (const key of ["prompt", "tool", "verifier_verdict"]) optionalField(turn, key, "string", at);
    optionalField(turn, "policy_rejected", "boolean", at);
    const { index: _ignored, ...fields } = turn;
    const stored = bounded({ record: "turn", ...fields, verifier_verdict: fields["verifier_verdict"] ?? "not_run", recorded_at: recordedAt }, [
      "parameters",
      "output",
      "prompt",
    ]);
    if (stored === undefined) return "turn_too_large";
    out.push(stored);
  }
  return out;
}

function requireNonNegative(p: JsonObject, key: string, integer: boolean, min = 0): number {
  const value = getOwn(p, key);
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new CarError("invalid_params", `invalid params: ${key} must be ${integer ? "an integer" : "a number"} >= ${min}`);
  }
  return value;
}

/** A `runs.record_model_turn` as stored (`record: "model_turn"`, secrets redacted), or `turn_too_large`. */
export function modelTurn(p: JsonObject, recordedAt: string): JsonObject | "turn_too_large" {
  const shape = (detail: string) => new CarError("invalid_params", `invalid params: runs.record_model_turn: ${detail}`);
  const turn_index = requireNonNegative(p, "turn_index", true, 1);
  const assistant = getOwn(p, "assistant_text");
  if (typeof assistant !== "string") throw shape("assistant_text must be a string (empty when only tools were requested)");
  const model_id = getOwn(p, "model_id");
  if (typeof model_id !== "string" || model_id === "") throw shape("model_id must be a non-empty string");
  const calls = getOwn(p, "requested_tool_calls");
  if (!Array.isArray(calls)) throw shape("requested_tool_calls must be an array");
  const requested = calls.map((call, i) => {
    if (!isJsonObject(call) || typeof call["id"] !== "string" || typeof call["name"] !== "string" || !("arguments" in call)) {
      throw shape(`requested_tool_calls[${i}] must be { id, name, arguments }`);
    }
    return { id: call["id"], name: call["name"], arguments: redactSecrets(call["arguments"] ?? null) };
  });
  const usage = getOwn(p, "token_usage");
  if (usage !== null && !(isJsonObject(usage) && USAGE_FIELDS.every((k) => usage[k] === undefined || usage[k] === null || typeof usage[k] === "number"))) {
    throw shape(`token_usage must be null or { ${USAGE_FIELDS.join(", ")} } of numbers`);
  }
  const duration_ms = requireNonNegative(p, "duration_ms", false);
  const stored = bounded(
    {
      record: "model_turn",
      turn_index,
      assistant_text: redactSecrets(assistant),
      requested_tool_calls: requested,
      model_id,
      token_usage: usage ?? null,
      duration_ms,
      recorded_at: recordedAt,
    },
    ["assistant_text", "requested_tool_calls"],
  );
  return stored ?? "turn_too_large";
}
