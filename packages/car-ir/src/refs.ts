/**
 * `$<id>.output` references (DECISIONS.md §2). A parameter whose WHOLE string
 * value is `$<id>.output`, optionally followed by `.field` segments, stands
 * for that action's output (or the field inside it). Inside a longer string
 * the text is left alone: interpolating into prose would make every `$` in a
 * shell command or a price a potential reference.
 */
import { CarError } from "./errors.ts";
import { cloneJson, emptyMap, getOwn, isJsonObject, setOwn } from "./json.ts";
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

/** Every reference in a parameter tree, in document order, with its pointer. */
export function findOutputRefs(params: JsonObject): LocatedOutputRef[] {
  const out: LocatedOutputRef[] = [];
  collect(params, [], out);
  return out;
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
    for (const key of Object.keys(value)) pushOutputRefIds(value[key]!, out);
  }
}

/** The distinct action ids a parameter tree references, in first-seen order. */
export function outputRefsOf(params: JsonObject): string[] {
  const ids: string[] = [];
  pushOutputRefIds(params, ids);
  return [...new Set(ids)];
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

function resolve(value: JsonValue, pointer: string, outputOf: OutputLookup): JsonValue {
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
    return cloneJson(picked.value ?? null);
  }
  if (Array.isArray(value)) return value.map((v, i) => resolve(v, `${pointer}/${i}`, outputOf));
  if (value !== null && typeof value === "object") {
    const out = emptyMap();
    for (const key of Object.keys(value)) setOwn(out, key, resolve(value[key]!, `${pointer}/${pointerToken(key)}`, outputOf));
    return out;
  }
  return value;
}

/** Looks up an action's output: `found: false` when it has none (not run, or unknown). */
export type OutputLookup = (id: string) => { found: boolean; value?: JsonValue };

/**
 * A copy of `params` with every whole-string reference replaced by the
 * referenced output (or field). Throws `not_found` when the action has no
 * output or the field path does not exist: silently passing the literal
 * `$a1.output.x` to a tool would hide the broken plan.
 */
export function resolveOutputRefs(params: JsonObject, outputOf: OutputLookup): JsonObject {
  return resolve(params, "", outputOf) as JsonObject;
}
