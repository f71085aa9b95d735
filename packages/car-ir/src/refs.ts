/**
 * `$<id>.output` references (DECISIONS.md §2). A parameter whose WHOLE string
 * value is `$<id>.output`, optionally followed by `.field` segments, stands
 * for that action's output (or the field inside it). Inside a longer string
 * the text is left alone: interpolating into prose would make every `$` in a
 * shell command or a price a potential reference.
 */
import { CarError } from "./errors.ts";
import { guarded } from "./input.ts";
import { emptyMap, getOwn, isJsonObject, setOwn } from "./json.ts";
import type { JsonObject, JsonValue } from "./types.ts";
import { pointerOf, pointerToken } from "./validate.ts";

/** A parsed reference: the action id and the field path below its output. */
export interface OutputRef {
  id: string;
  path: string[];
}

/** A reference found in a parameter tree, with the JSON pointer (relative to the parameters) where it sits. */
export interface LocatedOutputRef extends OutputRef {
  pointer: string;
}

const REF = /^\$(.+?)\.output((?:\.[^.]+)*)$/s;

/** Parses a whole-string reference, or `undefined` when `text` is not one. */
export function parseOutputRef(text: string): OutputRef | undefined {
  if (text.charCodeAt(0) !== 36 /* $ */) return undefined;
  const match = REF.exec(text);
  if (match === null) return undefined;
  const fields = match[2]!;
  return { id: match[1]!, path: fields === "" ? [] : fields.slice(1).split(".") };
}

/** Walks the tree keeping the path as tokens; a pointer string is built only for a found reference. */
function collect(value: JsonValue, path: (string | number)[], out: LocatedOutputRef[]): void {
  if (typeof value === "string") {
    const ref = parseOutputRef(value);
    if (ref !== undefined) out.push({ ...ref, pointer: pointerOf(path) });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      collect(value[i]!, path, out);
      path.pop();
    }
  } else if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) {
      path.push(key);
      collect(value[key]!, path, out);
      path.pop();
    }
  }
}

/** `findOutputRefs` for callers that guard the whole parse themselves (the proposal parser). */
export function collectOutputRefs(params: JsonObject): LocatedOutputRef[] {
  const out: LocatedOutputRef[] = [];
  collect(params, [], out);
  return out;
}

/** Every reference in a parameter tree, in document order, with its pointer. */
export function findOutputRefs(params: JsonObject): LocatedOutputRef[] {
  return guarded("invalid_params", "parameters", () => collectOutputRefs(params));
}

/** Appends the action id of every reference in the tree to `out` (repeats included): the cheap scan, with no pointers. */
export function pushOutputRefIds(value: JsonValue, out: string[]): void {
  if (typeof value === "string") {
    if (value.charCodeAt(0) !== 36 /* $ */) return;
    const ref = parseOutputRef(value);
    if (ref !== undefined) out.push(ref.id);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) pushOutputRefIds(value[i]!, out);
  } else if (value !== null && typeof value === "object") {
    for (const key in value) if (Object.hasOwn(value, key)) pushOutputRefIds(value[key]!, out);
  }
}

/**
 * Whether the tree holds any reference: a regular-expression test per `$`
 * string and nothing built, for a caller that needs only yes or no (verify's
 * static gate asks it of every action).
 */
export function hasOutputRefs(value: JsonValue): boolean {
  if (typeof value === "string") return value.charCodeAt(0) === 36 /* $ */ && REF.test(value);
  if (Array.isArray(value)) return value.some(hasOutputRefs);
  if (value !== null && typeof value === "object") {
    for (const key in value) if (Object.hasOwn(value, key) && hasOutputRefs(value[key]!)) return true;
  }
  return false;
}

/** The distinct action ids a parameter tree references, in first-seen order. */
export function outputRefsOf(params: JsonObject): string[] {
  const ids: string[] = [];
  guarded("invalid_params", "parameters", () => pushOutputRefIds(params, ids));
  return ids.length < 2 ? ids : [...new Set(ids)];
}

function select(output: JsonValue, path: readonly string[]): { found: boolean; value?: JsonValue } {
  let current: JsonValue = output;
  for (const field of path) {
    if (Array.isArray(current) && /^(0|[1-9][0-9]*)$/.test(field) && Number(field) < current.length) {
      current = current[Number(field)]!;
    } else if (isJsonObject(current)) {
      const next = getOwn(current, field);
      if (next === undefined) return { found: false };
      current = next;
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

/** The default bound on the bytes references may interpolate into one proposal's parameters (64 MiB). */
export const DEFAULT_MAX_INTERPOLATED_BYTES = 64 * 1024 * 1024;

/** JSON sizes of shared (frozen) values already measured; they cannot change, so each is measured once. */
const sizes = new WeakMap<object, number>();

/**
 * The length of `value` as JSON text, without building the text (a string
 * counts its characters and quotes, not its escapes). Iterative: an output
 * may be nested deeper than the stack.
 */
function jsonLength(value: JsonValue): number {
  if (value === null || typeof value !== "object") return typeof value === "string" ? value.length + 2 : String(value).length;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  let total = 0;
  const stack: JsonValue[] = [value];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (v === null || typeof v !== "object") {
      total += typeof v === "string" ? v.length + 2 : String(v).length;
    } else if (Array.isArray(v)) {
      total += 2 + Math.max(0, v.length - 1);
      for (let i = 0; i < v.length; i++) stack.push(v[i]!);
    } else {
      const keys = Object.keys(v);
      total += 2 + Math.max(0, keys.length - 1);
      for (const k of keys) {
        total += k.length + 3;
        stack.push(v[k]!);
      }
    }
  }
  sizes.set(value, total);
  return total;
}

/**
 * Freezes a value and everything inside it, so one output can be shared by
 * every parameter that references it: a tool that tried to change its
 * arguments in place would otherwise change another action's output. A
 * frozen value was frozen whole (only this function freezes outputs), so
 * the walk stops there.
 */
function freezeDeep(value: JsonValue): void {
  const stack: JsonValue[] = [value];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (v === null || typeof v !== "object" || Object.isFrozen(v)) continue;
    Object.freeze(v);
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) stack.push(v[i]!);
    else for (const k of Object.keys(v)) stack.push(v[k]!);
  }
}

/**
 * How many bytes of referenced outputs one proposal's parameters may take
 * in all. References share the output rather than copying it, but a tool
 * call's parameters are still serialised for the tool, so a proposal that
 * references one large output hundreds of times is refused
 * (`budget_exceeded`) before it can exhaust memory.
 */
export class InterpolationBudget {
  #used = 0;
  constructor(readonly maxBytes: number = DEFAULT_MAX_INTERPOLATED_BYTES) {}

  get used(): number {
    return this.#used;
  }

  spend(bytes: number, reference: string, pointer: string): void {
    this.#used += bytes;
    if (this.#used > this.maxBytes) {
      throw new CarError(
        "budget_exceeded",
        `reference '${reference}' at '${pointer}': the proposal's referenced outputs would reach ${this.#used} bytes of parameters, over the ${this.maxBytes}-byte limit`,
        { pointer, reference, max_bytes: this.maxBytes },
      );
    }
  }
}

function resolve(value: JsonValue, pointer: string, outputOf: OutputLookup, budget: InterpolationBudget | undefined): JsonValue {
  if (typeof value === "string") {
    const ref = parseOutputRef(value);
    if (ref === undefined) return value;
    const output = outputOf(ref.id);
    if (!output.found) {
      throw new CarError("not_found", `reference '${value}' at '${pointer}': action '${ref.id}' has no output`, { pointer, reference: value });
    }
    const picked = select(output.value ?? null, ref.path);
    if (!picked.found) {
      throw new CarError("not_found", `reference '${value}' at '${pointer}': the output of '${ref.id}' has no field '${ref.path.join(".")}'`, {
        pointer,
        reference: value,
      });
    }
    const shared = picked.value ?? null;
    budget?.spend(jsonLength(shared), value, pointer);
    freezeDeep(shared);
    return shared;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolve(v, `${pointer}/${i}`, outputOf, budget));
  if (value !== null && typeof value === "object") {
    const out = emptyMap();
    for (const key of Object.keys(value)) setOwn(out, key, resolve(value[key]!, `${pointer}/${pointerToken(key)}`, outputOf, budget));
    return out;
  }
  return value;
}

/** Looks up an action's output: `found: false` when it has none (not run, or unknown). */
export type OutputLookup = (id: string) => { found: boolean; value?: JsonValue };

/**
 * A copy of `params` with every whole-string reference replaced by the
 * referenced output (or field) itself — shared and deep-frozen, never
 * copied: outputs are immutable JSON. Throws `not_found` when the action
 * has no output or the field path does not exist (silently passing the
 * literal `$a1.output.x` to a tool would hide the broken plan), and
 * `budget_exceeded` when `budget` (one per proposal) runs out.
 */
export function resolveOutputRefs(params: JsonObject, outputOf: OutputLookup, budget?: InterpolationBudget): JsonObject {
  return guarded("invalid_params", "parameters", () => resolve(params, "", outputOf, budget) as JsonObject);
}
