/**
 * What classification reads from anywhere in a tool call's parameters: key
 * paths naming a credential, the dangerous phrases in their text (every
 * string, space-joined, lowercased), and, for a tool that runs commands,
 * the strings that read as a `full_access` command.
 *
 * A resolved `$id.output` is one deep-frozen value shared by every action
 * that references it, so its part of each reading is kept by identity
 * (`FrozenReadings`) and composed into each action's reading: 34 actions
 * referencing one 1 MB output walk it once, not 34 times. The text is kept
 * as the phrases found in it plus its first and last few characters, which
 * is all a phrase spanning a join can need. Walks stop 32 levels below the
 * parameters or below a kept value.
 */
import { type JsonValue, parseOutputRef } from "@car/ir";
import { argvToCommand } from "../rules/deny-command.ts";
import { type CommandReading, readCommand } from "./command-tier.ts";
import { FrozenReadings, isDeepFrozen } from "./frozen-value.ts";

export const DANGEROUS_PHRASES = ["drop table", "drop database", "delete from", "truncate table", "rm -rf", "git reset --hard", "mkfs", "dd if=", ":(){"];

/** The longest phrase: a phrase spanning a join lies within this many characters either side of it. */
const EDGE = Math.max(...DANGEROUS_PHRASES.map((p) => p.length));
const MAX_DEPTH = 32;

/** A text as the phrase check needs it: the phrases inside it, its first and last EDGE characters, and its length. */
interface TextSummary {
  readonly phrases: ReadonlySet<string>;
  readonly head: string;
  readonly tail: string;
  readonly length: number;
}

export interface ParameterReading {
  /** Key paths naming a credential (`auth.token` as `["auth", "token"]`), in walk order. */
  readonly credentialPaths: readonly (readonly string[])[];
  /** The dangerous phrases the parameters' text holds. */
  readonly phrases: ReadonlySet<string>;
}

/** One value's part of a reading, with paths relative to it. */
interface ValueReading {
  readonly credentialPaths: readonly (readonly string[])[];
  readonly text: TextSummary;
}

const NO_PHRASES: ReadonlySet<string> = new Set();
const EMPTY_TEXT: TextSummary = { phrases: NO_PHRASES, head: "", tail: "", length: 0 };
const KEPT = new FrozenReadings<ValueReading>();
const KEPT_COMMANDS = new FrozenReadings<readonly CommandText[]>();

export function readParameters(params: JsonValue): ParameterReading {
  const reading = readValue(params, true);
  return { credentialPaths: reading.credentialPaths, phrases: reading.text.phrases };
}

/**
 * One walk: key paths by a stack (copied only for a credential), and the text
 * as the pieces `flattenText` would join with spaces — strings at any depth,
 * `""` for an empty container, `String(value)` below the depth bound. A
 * deep-frozen value inside the parameters (`open`) is read once, kept, and
 * joined in as its summary.
 */
function readValue(root: JsonValue, open: boolean): ValueReading {
  const credentialPaths: (readonly string[])[] = [];
  const path: string[] = [];
  const pieces: string[] = [];
  let text: TextSummary | undefined;
  const flush = () => {
    if (pieces.length === 0) return;
    const summary = textOf(pieces.join(" "));
    pieces.length = 0;
    text = text === undefined ? summary : joinText(text, summary);
  };
  const visit = (value: JsonValue, depth: number): void => {
    if (typeof value === "string") return void pieces.push(value);
    if (typeof value !== "object" || value === null) return void pieces.push(value === null ? "" : String(value));
    if (open && depth > 0 && Object.isFrozen(value) && isDeepFrozen(value)) {
      const kept = KEPT.of(value, (v) => readValue(v, false));
      for (const p of kept.credentialPaths) credentialPaths.push([...path, ...p]);
      flush();
      text = text === undefined ? kept.text : joinText(text, kept.text);
      return;
    }
    if (depth > MAX_DEPTH) return void pieces.push(String(value));
    if (Array.isArray(value)) {
      if (value.length === 0) return void pieces.push("");
      for (const v of value) visit(v, depth + 1);
      return;
    }
    const keys = Object.keys(value);
    if (keys.length === 0) return void pieces.push("");
    for (const k of keys) {
      path.push(k);
      if (namesCredential(k)) credentialPaths.push([...path]);
      visit(value[k] as JsonValue, depth + 1);
      path.pop();
    }
  };
  visit(root, 0);
  flush();
  return { credentialPaths, text: text ?? EMPTY_TEXT };
}

function textOf(raw: string): TextSummary {
  const text = raw.toLowerCase();
  const phrases = DANGEROUS_PHRASES.filter((p) => text.includes(p));
  return {
    phrases: phrases.length === 0 ? NO_PHRASES : new Set(phrases),
    head: text.slice(0, EDGE),
    tail: text.slice(Math.max(0, text.length - EDGE)),
    length: text.length,
  };
}

/** `a + " " + b` as a summary: what each holds, and any phrase spanning the join. */
function joinText(a: TextSummary, b: TextSummary): TextSummary {
  const seam = `${a.tail} ${b.head}`;
  let phrases: Set<string> | undefined;
  for (const set of [a.phrases, b.phrases]) for (const p of set) (phrases ??= new Set()).add(p);
  for (const p of DANGEROUS_PHRASES) if (seam.includes(p)) (phrases ??= new Set()).add(p);
  return {
    phrases: phrases ?? NO_PHRASES,
    head: a.length >= EDGE ? a.head : `${a.head} ${b.head}`.slice(0, EDGE),
    tail: b.length >= EDGE ? b.tail : `${a.tail} ${b.tail}`.slice(-EDGE),
    length: a.length + 1 + b.length,
  };
}

/** A string of the parameters and the `full_access` signals it gives when read as a command line. */
export interface CommandText {
  readonly text: string;
  readonly signals: CommandReading["signals"];
}

/**
 * Every string in the parameters (keys excluded) and every argv array as the
 * line it runs, each once and in walk order, that reads as a readable
 * `full_access` command — an exec-like tool may run any string it is given.
 * Whole-string output references are not read: they are judged resolved.
 */
export function fullAccessStrings(params: JsonValue, read: (text: string) => CommandReading): CommandText[] {
  return gather(params, read, true);
}

function gather(params: JsonValue, read: (text: string) => CommandReading, open: boolean): CommandText[] {
  const seen = new Set<string>();
  const found: CommandText[] = [];
  const visit = (text: string) => {
    if (seen.has(text) || parseOutputRef(text) !== undefined) return;
    seen.add(text);
    const signals = read(text).signals.filter((s) => s.tier === "full_access" && !s.unreadable);
    if (signals.length > 0) found.push({ text, signals });
  };
  const keep = (kept: readonly CommandText[]) => {
    for (const c of kept) {
      if (seen.has(c.text)) continue;
      seen.add(c.text);
      found.push(c);
    }
  };
  const collect = (value: JsonValue, depth: number): void => {
    if (typeof value === "string") {
      visit(value);
      return;
    }
    if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return;
    if (open && depth > 0 && Object.isFrozen(value) && isDeepFrozen(value)) {
      keep(KEPT_COMMANDS.of(value, (v) => gather(v, readCommand, false)));
      return;
    }
    if (Array.isArray(value)) {
      if (value.length > 1 && value.every((v) => typeof v === "string") && !value.some((v) => parseOutputRef(v as string) !== undefined))
        visit(argvToCommand(value as string[]));
      for (const v of value) collect(v, depth + 1);
    } else for (const k of Object.keys(value)) collect(value[k] as JsonValue, depth + 1);
  };
  collect(params, 0);
  return found;
}

const CREDENTIAL_SEGMENTS = ["password", "passwd", "secret", "token", "credential", "credentials", "apikey"];
/** Keys repeat across the rows of an output: each is judged once (bounded, so keys an agent makes up cannot grow it forever). */
const CREDENTIAL_KEYS = new Map<string, boolean>();

/** A parameter key naming a credential (`api_key`, `authToken`, `private-key`). */
function namesCredential(key: string): boolean {
  let names = CREDENTIAL_KEYS.get(key);
  if (names === undefined) {
    const segs = nameSegments(key);
    const joined = segs.join("");
    names =
      segs.some((s) => CREDENTIAL_SEGMENTS.includes(s)) ||
      joined.includes("apikey") ||
      (segs.includes("private") && segs.includes("key")) ||
      (segs.includes("api") && segs.includes("key"));
    if (CREDENTIAL_KEYS.size >= 4096) CREDENTIAL_KEYS.clear();
    CREDENTIAL_KEYS.set(key, names);
  }
  return names;
}

/** Tool names and keys repeat on every call: each is split once (bounded, so names an agent makes up cannot grow it forever). */
const SEGMENTS = new Map<string, readonly string[]>();

/** `send_email`, `sendEmail`, `messaging.send`, `read-secret` → lowercase words (one frozen list per name). */
export function nameSegments(name: string): readonly string[] {
  let segments = SEGMENTS.get(name);
  if (segments === undefined) {
    segments = Object.freeze(
      name
        .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
        .split(/[^A-Za-z0-9]+/)
        .filter((s) => s !== "")
        .map((s) => s.toLowerCase()),
    );
    if (SEGMENTS.size >= 4096) SEGMENTS.clear();
    SEGMENTS.set(name, segments);
  }
  return segments;
}
