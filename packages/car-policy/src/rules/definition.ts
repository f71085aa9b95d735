/**
 * A policy as data — `{name, rule, target, key, pattern, value}`, the shape
 * `Runtime.registerPolicy` and the WebSocket `policy.register` take — turned
 * into the rule it names, and described in one line for listings. One place
 * for both, so every transport accepts and shows the same definitions.
 */
import { CarError } from "@car/ir";
import type { JsonValue, TraceRule } from "@car/ir";
import { traceRuleFrom } from "../trace/trace-rule-spec.ts";
import type { PolicyRule } from "../engine.ts";
import { callbackRule } from "./callback.ts";
import type { PolicyCallback } from "./callback.ts";
import { DENY_COMMAND_FIELDS, readDenyCommandSpec } from "../files/parse-policy-file.ts";
import { denyCommandRule } from "./deny-command.ts";
import { denyToolRule } from "./deny-tool.ts";
import { denyToolParamRule } from "./deny-tool-param.ts";
import { requireStateRule } from "./require-state.ts";

export interface PolicyDefinition {
  name: string;
  /** `deny_tool`, `deny_tool_param`, `require_state`, `deny_command`, `trace_rule`, or `callback` (a JavaScript rule). */
  rule: string;
  /** `trace_rule`: the rule, in the policy file's table form (`{ kind, tool, after?, max_calls?, scope? }`). */
  trace?: JsonValue;
  target?: string | null;
  key?: string | null;
  pattern?: string | null;
  /** `require_state`: the required value (or `value_json`, its JSON text). */
  value?: JsonValue;
  value_json?: string | null;
  callback?: PolicyCallback;
  /** `deny_command`: the fields of a policy file's `[[deny_command]]`. */
  program?: string;
  subcommand?: string;
  flags?: string[];
  args?: string[];
  tool?: string;
  param?: string;
}

/** The rule a definition names; `invalid_params` naming what is missing or unknown. */
export function policyRuleFrom(def: PolicyDefinition): PolicyRule {
  const need = (field: "target" | "key" | "pattern"): string => {
    const v = def[field];
    if (typeof v !== "string" || v === "") throw new CarError("invalid_params", `policy '${def.name}' (${def.rule}) needs '${field}'`);
    return v;
  };
  switch (def.rule) {
    case "deny_tool":
      return denyToolRule(def.name, need("target"));
    case "deny_tool_param":
      return denyToolParamRule(def.name, need("target"), need("key"), need("pattern"));
    case "require_state": {
      let value: JsonValue | undefined = def.value;
      if (value === undefined && typeof def.value_json === "string") {
        try {
          value = JSON.parse(def.value_json) as JsonValue;
        } catch {
          throw new CarError("invalid_params", `policy '${def.name}' (require_state): value_json is not JSON`);
        }
      }
      if (value === undefined) throw new CarError("invalid_params", `policy '${def.name}' (require_state) needs 'value' or 'value_json'`);
      return requireStateRule(def.name, need("key"), value);
    }
    case "deny_command": {
      // Read with the policy file's reader, so both accept the same fields; values arrive unchecked from the wire.
      const fields: Record<string, unknown> = {};
      for (const f of DENY_COMMAND_FIELDS) if (def[f] !== undefined) fields[f] = def[f];
      const spec = readDenyCommandSpec(fields, `policy '${def.name}': deny_command`, (problem) => {
        throw new CarError("invalid_params", problem);
      });
      return denyCommandRule(spec, def.name);
    }
    case "callback":
    case "deny_tool_callback":
      if (typeof def.callback !== "function") throw new CarError("invalid_params", `policy '${def.name}' (${def.rule}) needs a callback function`);
      return callbackRule(def.name, def.callback);
    case "trace_rule":
      throw new CarError("invalid_params", `policy '${def.name}' (trace_rule) is a temporal rule: register it on a TraceGate (traceRuleOfDefinition)`);
    default:
      throw new CarError("invalid_params", `unknown policy rule kind '${def.rule}'`);
  }
}

/** The temporal rule a `trace_rule` definition names; `invalid_params` naming what is wrong. */
export function traceRuleOfDefinition(def: PolicyDefinition): TraceRule {
  const fail = (problem: string): never => {
    throw new CarError("invalid_params", `policy '${def.name}' (trace_rule): ${problem}`);
  };
  const table = def.trace;
  if (typeof table !== "object" || table === null || Array.isArray(table)) return fail("needs 'trace', the rule as an object");
  if ("name" in table) fail("give the rule's name as the policy's 'name', not inside 'trace'");
  return { ...traceRuleFrom(table, "trace", fail), name: def.name };
}

/** One line saying what a definition does, for listings (`policy.list`). */
export function describePolicy(def: PolicyDefinition): string {
  if (def.trace !== undefined) return `trace_rule: ${JSON.stringify(def.trace)}`;
  const parts: string[] = [];
  if (def.target != null) parts.push(`target=${def.target}`);
  if (def.key != null) parts.push(`key=${def.key}`);
  if (def.pattern != null) parts.push(`pattern=${JSON.stringify(def.pattern)}`);
  for (const field of DENY_COMMAND_FIELDS) if (def[field] !== undefined) parts.push(`${field}=${JSON.stringify(def[field])}`);
  if (def.value !== undefined) parts.push(`value=${JSON.stringify(def.value)}`);
  else if (def.value_json != null) parts.push(`value=${def.value_json}`);
  return parts.length === 0 ? def.rule : `${def.rule}: ${parts.join(", ")}`;
}
