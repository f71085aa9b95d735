/**
 * A stable fingerprint for an operation: the same tool with the same
 * parameters (in any key order) is the same operation, whichever action id or
 * proposal carries it. Approvals are keyed on it.
 *
 * The canonical text is JCS, which composes member by member, so the text of
 * a deep-frozen parameter value (a resolved `$id.output`, shared by every
 * action that references it) is written once and kept by identity: 34
 * actions referencing one 1 MB output serialise it once.
 */
import { createHash } from "node:crypto";
import { type Action, canonicalJson, type JsonObject, type JsonValue } from "@car/ir";
import { FrozenReadings } from "./frozen-value.ts";

/** An array index as a member name: JCS orders such members like any other, but objects enumerate them first. */
const INDEX_KEY = /^(?:0|[1-9]\d*)$/;
/** A value's canonical text, or `undefined` when it has none (a lone surrogate). */
const CANONICAL = new FrozenReadings<string | undefined>();

export function operationFingerprint(action: Action): string {
  const hash = createHash("sha256");
  const parts = canonicalParts(action);
  if (parts !== undefined) {
    for (const part of parts) hash.update(part, "utf8");
    return hash.digest("hex");
  }
  const operation: JsonValue = { type: action.type, tool: action.tool ?? null, parameters: action.parameters };
  let text: string;
  try {
    text = canonicalJson(operation);
  } catch {
    // No canonical form (a lone surrogate): still a stable key, just not JCS.
    text = JSON.stringify(operation);
  }
  return hash.update(text, "utf8").digest("hex");
}

/**
 * `{"parameters":…,"tool":…,"type":…}` in pieces, each parameter's value
 * canonical on its own (kept when deep-frozen); `undefined` when a piece has
 * no canonical form or the members need the full canonicaliser's care.
 */
function canonicalParts(action: Action): string[] | undefined {
  const params: JsonObject = action.parameters;
  const keys = Object.keys(params).sort();
  const parts = ['{"parameters":{'];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (INDEX_KEY.test(key) || !key.isWellFormed()) return undefined;
    const value = CANONICAL.of(params[key] as JsonValue, canonicalOrNothing);
    if (value === undefined) return undefined;
    parts.push(`${i === 0 ? "" : ","}${JSON.stringify(key)}:`, value);
  }
  const tool = canonicalOrNothing(action.tool ?? null);
  if (tool === undefined) return undefined;
  parts.push(`},"tool":${tool},"type":${JSON.stringify(action.type)}}`);
  return parts;
}

function canonicalOrNothing(value: JsonValue): string | undefined {
  try {
    return canonicalJson(value);
  } catch {
    return undefined;
  }
}
