/**
 * What a policy reads from runtime state. The engine's `StateStore` lives in a
 * package above this one, so rules depend only on a lookup: anything with a
 * `get(key)` method, or a plain JSON object.
 */
import { getOwn, type JsonObject, type JsonValue } from "@car/ir";

export interface StateLookup {
  get(key: string): JsonValue | undefined;
}

export type PolicyState = StateLookup | JsonObject;

/**
 * Normalises either form to a lookup. JSON data never holds functions, so a
 * callable `get` can only mean a store; a JSON key named `get` stays data.
 */
export function stateLookup(state: PolicyState): StateLookup {
  if (typeof (state as { get?: unknown }).get === "function") return state as StateLookup;
  const data = state as JsonObject;
  return { get: (key) => getOwn(data, key) };
}
