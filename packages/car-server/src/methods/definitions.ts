/**
 * The two definition shapes clients send in batches (`session.init`) or one
 * at a time (`tools.register`, `policy.register`), read into what the
 * runtime registers. Both are applied all-or-nothing (`Runtime.registerAll`
 * checks every entry first), so a bad entry leaves the session as it was.
 */
import { CarError, hasKey, isJsonObject, type JsonObject, type JsonValue } from "@car/ir";
import type { PolicyDefinition } from "@car/engine";
import { DENY_COMMAND_FIELDS, describePolicy } from "@car/policy";
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
    throw invalidParams(`${where}: a policy scoped to a policy session is registered with policy.register { ..., session_id }; omit session_id here`);
  }
  return def;
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
      throw new CarError(
        "budget_exceeded",
        `this connection would have ${names.size} tools; the limit is ${maxToolsPerConnection} (--max-tools); unregister some first`,
      );
    }
  }
  if (policies.length > 0) {
    const count = session.rules.ownCount + policies.length;
    if (count > maxPoliciesPerConnection) {
      throw new CarError(
        "budget_exceeded",
        `this connection would have ${count} policies; the limit is ${maxPoliciesPerConnection} (--max-policies); unregister some first`,
      );
    }
  }
}

/** Registers tools and policies on the session, or nothing at all (the first bad entry's error). */
export function registerAll(session: Session, tools: readonly JsonObject[], policies: readonly PolicyDefinition[]): void {
  for (const p of policies) session.rules.checkName(p.name);
  checkCounts(session, tools, policies);
  session.runtime.registerAll(tools as (JsonObject & { name: string })[], policies);
  for (const p of policies) session.rules.adopt(p.name, describePolicy(p));
}
