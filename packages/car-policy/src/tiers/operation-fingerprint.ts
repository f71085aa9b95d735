/**
 * A stable fingerprint for an operation: the same tool with the same
 * parameters (in any key order) is the same operation, whichever action id or
 * proposal carries it. Approvals are keyed on it.
 */
import { createHash } from "node:crypto";
import { type Action, canonicalJson, type JsonValue } from "@car/ir";

export function operationFingerprint(action: Action): string {
  const operation: JsonValue = { type: action.type, tool: action.tool ?? null, parameters: action.parameters };
  let text: string;
  try {
    text = canonicalJson(operation);
  } catch {
    // No canonical form (a lone surrogate): still a stable key, just not JCS.
    text = JSON.stringify(operation);
  }
  return createHash("sha256").update(text, "utf8").digest("hex");
}
