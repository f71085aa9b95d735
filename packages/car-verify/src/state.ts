/**
 * State crosses this package's boundary as a plain JSON map and lives inside
 * it as a `Map`, so keys such as `__proto__` stay ordinary data both ways.
 */
import type { JsonObject, JsonValue } from "@car/ir";
import { cloneJson, emptyMap, setOwn } from "@car/ir";

export type StateInput = Readonly<Record<string, JsonValue>>;

export function stateMap(state: StateInput | undefined): Map<string, JsonValue> {
  const map = new Map<string, JsonValue>();
  if (state !== undefined) for (const key of Object.keys(state)) map.set(key, state[key]!);
  return map;
}

/** A deep copy as a prototype-free JSON object, so callers cannot reach back into the proposal. */
export function stateRecord(map: ReadonlyMap<string, JsonValue>): JsonObject {
  const out = emptyMap();
  for (const [key, value] of map) setOwn(out, key, cloneJson(value));
  return out;
}
