/**
 * Plain-data helpers. Maps in the IR (parameters, state, effects) may hold any
 * key — `__proto__`, `constructor`, `toString` — as ordinary data, so nothing
 * here reads through the prototype chain or assigns with `obj[key] = v` on a
 * prototype-bearing object.
 */
import { CarError } from "./errors.ts";
import type { JsonObject, JsonValue } from "./types.ts";

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * An empty map with no prototype: `__proto__` is an ordinary key on it.
 * Made by dropping a literal's prototype rather than `Object.create(null)`,
 * which V8 builds in dictionary mode: ~176 bytes and several times the
 * allocation time per map, against ~46 for this fast-mode object with the
 * same semantics (the engine makes several per action).
 */
export function emptyMap<T = JsonValue>(): Record<string, T> {
  return Object.setPrototypeOf({}, null) as Record<string, T>;
}

/**
 * The one empty list and the one empty map that every parsed action lacking
 * its own shares (most actions name five or six of their nineteen fields, so
 * six lists and three maps per action were empty: about 360 B each at 100k
 * actions). Frozen, so no holder can change what the others see; parsed lists
 * and maps are typed read-only to match. Code that runs once per action reads
 * lists by index: `for…of` over a frozen array allocates an iterator every
 * time (V8 keeps that fast path for plain arrays), a million at 1M actions.
 */
export const EMPTY_LIST: readonly never[] = Object.freeze([]);
export const EMPTY_MAP: Readonly<JsonObject> = Object.freeze(emptyMap());

/** Whether `obj` has no own enumerable key (without building the key list). */
export function isEmptyMap(obj: object): boolean {
  for (const key in obj) if (hasOwn.call(obj, key)) return false;
  return true;
}

/** Own-property lookup that never consults `Object.prototype`. */
export function hasKey(obj: object, key: string): boolean {
  return hasOwn.call(obj, key);
}

/** Own-property read: `undefined` when the key is absent, whatever the prototype says. */
export function getOwn<T>(obj: Record<string, T>, key: string): T | undefined {
  return hasOwn.call(obj, key) ? obj[key] : undefined;
}

/** Defines an own, enumerable data property, so `__proto__` stays a key. */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Deep JSON equality: key order is ignored, numbers compare by value. */
export function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEquals(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!hasOwn.call(b, k)) return false;
    if (!jsonEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/**
 * A deep copy of JSON data into prototype-free maps, so the copy can be
 * mutated and read without any key reaching `Object.prototype`. A value
 * nested past the stack (or circular) is `invalid_params`, not a RangeError.
 */
export function cloneJson<T extends JsonValue>(value: T): T {
  try {
    return copyJson(value);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new CarError("invalid_params", "the value is nested too deeply (or is circular) to be JSON data", {}, { cause: error });
  }
}

function copyJson<T extends JsonValue>(value: T): T {
  // JSON has no negative zero (`JSON.stringify(-0)` is "0"): a copy holds what
  // a stored and re-read value would, so caches never disagree with storage.
  if (value === 0) return 0 as T;
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => copyJson(v)) as T;
  const out = emptyMap();
  // Plain assignment is safe here: with no prototype there is no `__proto__`
  // accessor to hit, so every key (including `__proto__`) becomes an own data
  // property — and it is much cheaper than `defineProperty`.
  // for…in with an own-key test lists what Object.keys would, in its order, without allocating the list.
  for (const k in value) if (hasOwn.call(value, k)) out[k] = copyJson((value as JsonObject)[k] as JsonValue);
  return out as T;
}

/**
 * What `cloneJson` returns, made IN PLACE: every object in the tree loses its
 * prototype. Only for data nothing else holds — the fresh result of our own
 * `JSON.parse` — where copying would be pure overhead.
 */
export function adoptJson<T extends JsonValue>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) adoptJson(value[i] as JsonValue);
    return value;
  }
  Object.setPrototypeOf(value, null);
  for (const k of Object.keys(value)) adoptJson((value as JsonObject)[k] as JsonValue);
  return value;
}

/** The string form a policy rule matches against: strings as-is, anything else as compact JSON. */
export function stringCoerce(value: JsonValue): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
