/**
 * State crosses this package's boundary as a plain JSON map and lives inside
 * it as a `Map`, so keys such as `__proto__` stay ordinary data both ways.
 */
import type { JsonObject, JsonValue } from "@car/ir";
import { cloneJson, emptyMap } from "@car/ir";
import { readJsonObject } from "@car/ir/internal";

export type StateInput = Readonly<Record<string, JsonValue>>;

/** The state as a `Map`; anything but a JSON object (or absent) is `invalid_params`, never a TypeError or a stack overflow later. */
export function stateMap(state: StateInput | undefined): Map<string, JsonValue> {
  const map = new Map<string, JsonValue>();
  if (state === undefined) return map;
  const checked = readJsonObject(state, "state") as StateInput;
  for (const key of Object.keys(checked)) map.set(key, checked[key]!);
  return map;
}

/** A deep copy as a prototype-free JSON object, so callers cannot reach back into the proposal. */
export function stateRecord(map: ReadonlyMap<string, JsonValue>): JsonObject {
  const out = emptyMap();
  // forEach, not for-of: no [key, value] pair allocated per entry (a 1M-action chain leaves 1M keys).
  // Plain assignment, not `setOwn`: on a prototype-free object it defines the same own data
  // property (`__proto__` included) without a descriptor object per key.
  map.forEach((value, key) => {
    out[key] = cloneJson(value);
  });
  return out;
}
