/**
 * The two definition shapes clients send in batches (`session.init`) or one
 * at a time (`tools.register`, `policy.register`), read into what the
 * runtime registers. Both are applied all-or-nothing: a batch is tried on a
 * scratch runtime first, so a bad entry leaves the session as it was.
 */
import { CarError, hasKey, isJsonObject, type JsonObject, type JsonValue } from "@car/ir";
import { Runtime, type PolicyDefinition } from "@car/engine";
import { DENY_COMMAND_FIELDS } from "@car/policy";
import { invalidParams, optionalString, requireString } from "../params.ts";
import type { Session } from "../session.ts";

/** Rule kinds that need a JavaScript function: they cannot arrive over the wire. */
const CALLBACK_RULES = new Set(["callback", "deny_tool_callback"]);

export function policyDefinition(raw: JsonValue, where: string): PolicyDefinition {
  if (!isJsonObject(raw)) throw invalidParams(`${where} must be an object`);
  const def: PolicyDefinition = { name: requireString(raw, "name"), rule: requireString(raw, "rule") };
  if (CALLBACK_RULES.has(def.rule)) {
    throw invalidParams(`${where}: '${def.rule}' rules run a JavaScript function and cannot be registered over the WebSocket`);
  }
  for (const field of ["target", "key", "pattern", "value_json"] as const) {
    const v = optionalString(raw, field);
    if (v !== undefined) def[field] = v;
  }
  if (hasKey(raw, "value")) def.value = raw["value"] as JsonValue;
  if (hasKey(raw, "trace")) def.trace = raw["trace"] as JsonValue;
  // deny_command's fields pass as sent: the runtime checks them (CarError invalid_params naming the field).
  for (const field of DENY_COMMAND_FIELDS) if (hasKey(raw, field)) Object.assign(def, { [field]: raw[field] });
  if (optionalString(raw, "session_id") !== undefined) {
    throw invalidParams(`${where}: session-scoped policies (session.policy.open) are not supported; omit session_id`);
  }
  return def;
}

/** One line saying what a registered policy does, for `policy.list`. */
export function describePolicy(def: PolicyDefinition): string {
  const parts: string[] = [];
  if (def.trace !== undefined) return `trace_rule: ${JSON.stringify(def.trace)}`;
  if (def.target != null) parts.push(`target=${def.target}`);
  if (def.key != null) parts.push(`key=${def.key}`);
  if (def.pattern != null) parts.push(`pattern=${JSON.stringify(def.pattern)}`);
  for (const field of DENY_COMMAND_FIELDS) if (def[field] !== undefined) parts.push(`${field}=${JSON.stringify(def[field])}`);
  if (def.value !== undefined) parts.push(`value=${JSON.stringify(def.value)}`);
  else if (def.value_json != null) parts.push(`value=${def.value_json}`);
  return parts.length === 0 ? def.rule : `${def.rule}: ${parts.join(", ")}`;
}

export function toolDefinition(raw: JsonValue, where: string): JsonObject {
  if (!isJsonObject(raw)) throw invalidParams(`${where} must be an object`);
  requireString(raw, "name");
  return raw;
}

/** Refuses a registration that would take the session past its tool or policy limit (each tool holds compiled schemas). */
function checkCounts(session: Session, tools: readonly JsonObject[], policies: readonly PolicyDefinition[]): void {
  const { maxToolsPerConnection, maxPoliciesPerConnection } = session.options.limits;
  if (tools.length > 0) {
    const names = new Set(session.runtime.listTools().map((t) => t.name));
    for (const t of tools) names.add(t["name"] as string);
    if (names.size > maxToolsPerConnection) {
      throw new CarError("budget_exceeded", `this connection would have ${names.size} tools; the limit is ${maxToolsPerConnection} (--max-tools); unregister some first`);
    }
  }
  if (policies.length > 0) {
    const count = session.rules.ownCount + policies.length;
    if (count > maxPoliciesPerConnection) {
      throw new CarError("budget_exceeded", `this connection would have ${count} policies; the limit is ${maxPoliciesPerConnection} (--max-policies); unregister some first`);
    }
  }
}

/**
 * Registers tools and policies on the session, or nothing at all: every
 * entry is first registered on a throwaway runtime, where any error (a
 * schema that does not compile, a policy missing its target) surfaces.
 */
export function registerAll(session: Session, tools: readonly JsonObject[], policies: readonly PolicyDefinition[]): void {
  for (const p of policies) session.rules.checkName(p.name);
  checkCounts(session, tools, policies);
  const scratch = new Runtime();
  for (const t of tools) scratch.registerTool(t as JsonObject & { name: string });
  for (const p of policies) scratch.registerPolicy(p);
  void scratch.close();
  for (const t of tools) session.runtime.registerTool(t as JsonObject & { name: string });
  for (const p of policies) {
    session.runtime.registerPolicy(p);
    session.rules.adopt(p.name, describePolicy(p));
  }
}
