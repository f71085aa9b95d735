/**
 * RFC 8785 (JCS) canonical JSON and the parameter digest the event log joins
 * on. For I-JSON data, JCS is `JSON.stringify` with every object's members
 * in UTF-16 code-unit order: ECMAScript's number-to-string is the one JCS
 * prescribes, and `JSON.stringify` escapes strings the way JCS does. So the
 * fast path reorders members (copying only objects that are out of order)
 * and lets the native `JSON.stringify` write the text. Anything that path
 * cannot vouch for — integer-like member names (objects enumerate those
 * first, whatever their insertion order), `toJSON`, boxed primitives, lone
 * surrogates, non-finite numbers, cycles, nesting deeper than the stack —
 * goes to the `canonicalize` package, which implements JCS in full and
 * reports what is wrong. A property test pins the two together.
 */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { CarError } from "./errors.ts";
import { isEmptyMap } from "./json.ts";
import type { JsonValue } from "./types.ts";

/** Thrown inside the fast path when the value needs the full canonicaliser. */
const UNUSUAL = Symbol("unusual");

/** An array index as a property name: such members enumerate before all others. */
const INDEX_KEY = /^(?:0|[1-9]\d*)$/;

/** Does `value` serialise to nothing (dropped in objects, `null` in arrays), as JSON.stringify treats it? */
function isAbsent(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

/**
 * `value` with every object's members in JCS order, for JSON.stringify to
 * write; the same object when it already is, so canonical input allocates
 * nothing. Throws UNUSUAL when the fast path does not apply.
 */
function ordered(value: unknown): unknown {
  switch (typeof value) {
    case "string":
      if (!value.isWellFormed()) throw UNUSUAL;
      return value;
    case "number":
      if (!Number.isFinite(value)) throw UNUSUAL;
      return value;
    case "boolean":
      return value;
    case "object":
      if (value === null) return null;
      return Array.isArray(value) ? orderedArray(value) : orderedObject(value as Record<string, unknown>);
    default:
      throw UNUSUAL;
  }
}

function orderedArray(array: unknown[]): unknown[] {
  if (typeof (array as { toJSON?: unknown }).toJSON === "function") throw UNUSUAL;
  let copy: unknown[] | undefined;
  for (let i = 0; i < array.length; i++) {
    const element = array[i];
    if (isAbsent(element)) continue;
    const out = ordered(element);
    if (out !== element) (copy ??= array.slice())[i] = out;
  }
  return copy ?? array;
}

function orderedObject(object: Record<string, unknown>): Record<string, unknown> {
  if (typeof object.toJSON === "function" || object instanceof Number || object instanceof String || object instanceof Boolean) throw UNUSUAL;
  let keys: readonly string[] = Object.keys(object);
  const n = keys.length;
  if (n === 0) return object;
  if (INDEX_KEY.test(keys[0]!)) throw UNUSUAL;
  let sorted = true;
  for (let i = 0; i < n; i++) {
    if (!keys[i]!.isWellFormed()) throw UNUSUAL;
    if (i > 0 && keys[i - 1]! > keys[i]!) sorted = false;
  }
  if (!sorted) keys = sortedKeys(keys);
  let copy: Record<string, unknown> | undefined = sorted ? undefined : {};
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    const value = object[key];
    const out = isAbsent(value) ? value : ordered(value);
    if (copy === undefined) {
      if (out === value) continue;
      // The first member that changed: copy the unchanged ones before it.
      copy = {};
      for (let j = 0; j < i; j++) put(copy, keys[j]!, object[keys[j]!]);
    }
    put(copy, key, out);
  }
  return copy ?? object;
}

/** The member names last sorted, and their order: records of one shape (a proposal's actions) come in runs. */
let lastUnsorted: readonly string[] = [];
let lastSorted: readonly string[] = [];

/** `keys` in UTF-16 code-unit order (`sort`'s default), reusing the previous answer when the names are the same. */
function sortedKeys(keys: readonly string[]): readonly string[] {
  if (keys.length === lastUnsorted.length && keys.every((key, i) => key === lastUnsorted[i])) return lastSorted;
  lastUnsorted = keys;
  lastSorted = [...keys].sort();
  return lastSorted;
}

/** Adds a member at the end, keeping `__proto__` an ordinary member. */
function put(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

/** The RFC 8785 canonical form of a JSON value; `invalid_params` for non-I-JSON input (lone surrogates, non-finite numbers). */
export function canonicalJson(value: JsonValue): string {
  try {
    const text = JSON.stringify(ordered(value));
    if (text !== undefined) return text;
  } catch {
    // Not for the fast path (or a cycle, or too deep): the full canonicaliser decides.
  }
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (error) {
    throw new CarError("invalid_params", `value has no canonical JSON form: ${(error as Error).message}`, {}, { cause: error });
  }
  if (text === undefined) throw new CarError("invalid_params", "value has no canonical JSON form: not a JSON value");
  return text;
}

/** Digests of recent canonical forms: proposals repeat the same parameters (`{}` above all), and hashing is most of the digest's cost. */
const recentDigests = new Map<string, string>();
const RECENT_DIGESTS = 256;
/** Longer canonical forms are hashed every time: caching them would keep large strings alive. */
const CACHED_DIGEST_MAX_CHARS = 256;

/** The digest of `{}`, the most common parameters of all, known without building its canonical form. */
let emptyDigest: string | undefined;

/** A plain object with no enumerable members and no `toJSON`: JSON and its canonical form are `{}`. */
function isEmptyRecord(value: JsonValue): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  if ((proto !== null && proto !== Object.prototype) || typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  return isEmptyMap(value);
}

/** Lowercase hex SHA-256 of the canonical form of an action's `parameters`. */
export function paramsDigest(params: JsonValue): string {
  if (isEmptyRecord(params)) return (emptyDigest ??= createHash("sha256").update("{}", "utf8").digest("hex"));
  const canonical = canonicalJson(params);
  if (canonical.length > CACHED_DIGEST_MAX_CHARS) return createHash("sha256").update(canonical, "utf8").digest("hex");
  let digest = recentDigests.get(canonical);
  if (digest === undefined) {
    digest = createHash("sha256").update(canonical, "utf8").digest("hex");
    if (recentDigests.size >= RECENT_DIGESTS) recentDigests.clear();
    recentDigests.set(canonical, digest);
  }
  return digest;
}
