/**
 * Parsers for the wire shapes other than proposals: each validates against
 * its shipped schema, applies the shape's documented defaults, keeps unknown
 * fields, and throws a `CarError` listing every problem with its pointer.
 */
import type { CarErrorCode } from "./errors.ts";
import { TOOL_SCHEMA_FIELDS, copyUnknownFields } from "./fields.ts";
import { guarded, problemsError, readJsonInput } from "./input.ts";
import { cloneJson, emptyMap, getOwn } from "./json.ts";
import type { SchemaName } from "./schemas.ts";
import type { AgentOutput, AgentSpec, JsonObject, JsonValue, StateMutation, ToolSchema, ToolSource, TraceEvent } from "./types.ts";
import { shapeProblems } from "./validate.ts";

type Raw = Record<string, JsonValue>;

function parseShape<T>(name: SchemaName, what: string, code: CarErrorCode, input: unknown, build: (raw: Raw) => T): T {
  return guarded(code, what, () => {
    const raw = readJsonInput(input, code, what);
    const problems = shapeProblems(name, raw);
    if (problems.length > 0) throw problemsError(code, what, problems);
    return build(raw as Raw);
  });
}

/** A shape with no defaults: a deep, prototype-free copy, unknown fields included. */
function copyOf<T>(raw: Raw): T {
  return cloneJson(raw as JsonObject) as unknown as T;
}

/** A ToolSchema; defaults: source `user_defined`, description `""`, parameters `{}`, idempotent `false`. */
export function parseToolSchema(input: unknown): ToolSchema {
  return parseShape("toolSchema", "tool schema", "invalid_params", input, (raw) => {
    const out: ToolSchema = {
      name: raw["name"] as string,
      source: (getOwn(raw, "source") as ToolSource | undefined) ?? "user_defined",
      description: (getOwn(raw, "description") as string | undefined) ?? "",
      parameters: cloneJson((getOwn(raw, "parameters") as JsonObject | undefined) ?? emptyMap()),
      idempotent: (getOwn(raw, "idempotent") as boolean | undefined) ?? false,
    };
    const returns = getOwn(raw, "returns");
    if (returns !== undefined) out.returns = cloneJson(returns as JsonObject);
    const ttl = getOwn(raw, "cache_ttl_secs");
    if (ttl !== undefined) out.cache_ttl_secs = ttl as number;
    const rate = getOwn(raw, "rate_limit");
    if (rate !== undefined) out.rate_limit = copyOf(rate as Raw);
    copyUnknownFields(raw, out, TOOL_SCHEMA_FIELDS);
    return out;
  });
}

/** An AgentSpec: strict, every field required. */
export function parseAgentSpec(input: unknown): AgentSpec {
  return parseShape("agentSpec", "agent spec", "invalid_params", input, (raw) => copyOf<AgentSpec>(raw));
}

/** An agent callback's answer: strict — a missing field fails, `tool_calls` is an integer count. */
export function parseAgentOutput(input: unknown): AgentOutput {
  return parseShape("agentOutput", "agent output", "invalid_output", input, (raw) => copyOf<AgentOutput>(raw));
}

export function parseTraceEvent(input: unknown): TraceEvent {
  return parseShape("traceEvent", "trace event", "invalid_params", input, (raw) => copyOf<TraceEvent>(raw));
}

/** `{"op":"set","value":…}` (a `null` value is a set, not a delete) or `{"op":"delete"}`. */
export function parseStateMutation(input: unknown): StateMutation {
  return parseShape("stateMutation", "state mutation", "invalid_params", input, (raw) => copyOf<StateMutation>(raw));
}
