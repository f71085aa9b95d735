/**
 * The spellings-free form of a call that keyword, substring and regex rules
 * also see (DECISIONS §17). An operator's rule on `rm -rf /` or on
 * `169.254.169.254` is about a command or a destination, not about the bytes
 * an agent chose: `r''m -r -f "/"` and `http://0xa9fea9fe/` are the same
 * things spelled otherwise.
 *
 * - A command (`command`, a string or an argv array) becomes one line per
 *   program it runs, read with the shell reader: quotes removed, escapes and
 *   ANSI-C strings decoded, whitespace collapsed; then the same line with
 *   its flags in one canonical order (short flags merged and sorted, long
 *   flags sorted, before the operands); URL operands with every host
 *   reading in canonical spelling.
 * - A URL-shaped parameter becomes its canonical form per host reading.
 *
 * The normalised call holds only the parameters normalising changes; the
 * rest were judged as sent. The rules that run on this form are
 * prohibitions whose matching only grows with more text (keywords,
 * `contains`, non-negated regexes); `equals`, allowlists, negated regexes
 * and rate limits see only the call as sent. A rule set's
 * `NormalisationIndex` skips the parameters no rule could match once
 * normalised, so most calls are never parsed.
 */
import { type Action, emptyMap, type JsonObject, type JsonValue, setOwn } from "@car/ir";
import { type CheckContext, LazyCheckContext } from "../check-context.ts";
import type { PolicyRule } from "../engine.ts";
import { type Invocation, pipelinesOf } from "../inspectors/egress/command-position.ts";
import { MAX_COMMAND_LENGTH } from "../inspectors/egress/egress-inspector.ts";
import { UNKNOWN_HOST, urlHosts } from "../inspectors/egress/hosts.ts";
import { denyKeywordRule } from "../rules/deny-keyword.ts";
import { argvToCommand } from "../rules/deny-command.ts";
import { lexicalPath } from "../lexical-path.ts";
import { markSplitRule } from "../rule-shapes.ts";
import { asciiCharSet, type CharSet, foldCase, foldedCharSet, type NormalisedReads, type NormalisationIndex } from "./normalisation-index.ts";

const URL_SHAPE = /^[a-zA-Z][a-zA-Z0-9+.-]*:[/\\]*[^\s]+$/;
/** What a text needs to be URL-shaped once trimmed, tested before anything else (most parameters fail at their first character). */
export const SCHEME_FIRST = /^\s*[a-zA-Z][a-zA-Z0-9+.-]*:/;
/** A URL already in canonical spelling (lowercase name ending in a letters-only label, no userinfo, port or trailing dot): nothing to normalise. */
export const PLAIN_URL = /^https?:\/\/(?:[a-z0-9-]+\.)+[a-z]{2,63}(?:[/?#]|$)/;
const OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
/**
 * A URL whose canonical form can be read off its text: `http(s)://`, a plain
 * name or a dotted-decimal IPv4 address, maybe a port. With no `@`, `\` or
 * whitespace anywhere (`READINGS_DIFFER`), every reader finds that one host,
 * and the canonical form is the URL without its port.
 */
const SIMPLE_URL = new RegExp(`^(https?://(?:(?:[a-z0-9-]+\\.)+[a-z]{2,63}|(?:${OCTET}\\.){3}${OCTET}))(?::[0-9]{1,5})?(?=[/?#]|$)`);
const READINGS_DIFFER = /[@\\\s]/;
/** A command made of plain words alone: no quotes, escapes, expansions, operators or redirections, so its words are its space-separated tokens. */
const PLAIN_WORDS = /^[A-Za-z0-9_./=,@%+:~#*?!^ \t-]*$/;

/**
 * The normal form of each parameter normalising changes (a command or a URL),
 * and no other; `undefined` when it changes none. Rules on the normalised
 * call see these alone: a parameter it leaves as sent was judged as sent.
 * With an `index`, a parameter no rule could match once normalised is left
 * out as well.
 */
export function normalisedParams(params: JsonObject, index?: NormalisationIndex, context?: LazyCheckContext): JsonObject | undefined {
  let out: JsonObject | undefined;
  for (const key of Object.keys(params)) {
    // Keys from Object.keys are own properties, so a plain read is an own read here.
    const value = params[key] as JsonValue;
    const normal = normalisedValue(key, value, index, context);
    if (normal === undefined || normal === value) continue;
    setOwn((out ??= emptyMap()), key, normal);
  }
  return out;
}

/**
 * `false` only when `normalisedValue` is `undefined` for this parameter, by
 * its cheap tests alone: no rule reads it once normalised, a command whose
 * normal form no rule's needle fits, a text that is not a URL or is a plain
 * one. A check whose parameters all answer `false` builds no normal form;
 * the parameter scan asks while it reads each parameter.
 */
export function mayNormalise(key: string, value: JsonValue, index: NormalisationIndex | undefined, context: LazyCheckContext | undefined): boolean {
  // Only a command or a string (a URL) has a normal form.
  if (key !== "command" && typeof value !== "string") return false;
  const reads = index === undefined ? "always" : index.reads(key);
  if (reads === "never") return false;
  if (key === "command") {
    const command = typeof value === "string" ? value : isArgv(value) ? argvToCommand(value) : undefined;
    if (command === undefined || command.length > MAX_COMMAND_LENGTH) return false;
    const sent = typeof value === "string" ? value : undefined;
    return reads !== "bounded" || index?.anyWithin(key, normalFormAlphabet(command, "command", context?.charsOf(command, SCRATCH)), sent) === true;
  }
  // Most parameters are not URLs (a scheme is the first thing they lack), and most URLs are already plain.
  return typeof value === "string" && !isPlainUrl(value) && mayHaveScheme(value) && !PLAIN_URL.test(value);
}

function normalisedValue(key: string, value: JsonValue, index: NormalisationIndex | undefined, context: LazyCheckContext | undefined): string | undefined {
  if (!mayNormalise(key, value, index, context)) return undefined;
  if (key === "command") return normalisedCommand(typeof value === "string" ? value : argvToCommand(value as string[]));
  const reads = index === undefined ? "always" : index.reads(key);
  if (typeof value !== "string") return undefined;
  const simple = READINGS_DIFFER.test(value) ? null : SIMPLE_URL.exec(value);
  if (simple) {
    const normal = `${simple[1] as string}${value.slice(simple[0].length)}`;
    if (normal === value || (reads === "bounded" && !index?.anyWithin(key, foldedCharSet(normal), value))) return undefined;
    return normal;
  }
  const url = value.trim();
  if (!URL_SHAPE.test(url)) return undefined;
  if (reads === "bounded" && !index?.anyWithin(key, normalFormAlphabet(url, "url"), value)) return undefined;
  return canonicalUrls(url).join("\n");
}

/** Where a command's remembered characters are copied; read at once, like `foldedCharSet`'s. */
const SCRATCH: CharSet = new Int32Array(4);

/**
 * Whether `PLAIN_URL` matches `text`, read by hand for the common case —
 * `http(s)://`, dot-separated labels of `[a-z0-9-]`, a last label of 2–63
 * letters, then the end or `/`, `?` or `#` — with the regex's answer
 * exactly (a property test holds them equal). Every URL in most calls is
 * this, and a hand loop over its host costs a fraction of the regex's
 * backtracking over labels.
 */
export function isPlainUrl(text: string): boolean {
  let i = text.startsWith("https://") ? 8 : text.startsWith("http://") ? 7 : -1;
  if (i < 0) return false;
  let labels = 0;
  let labelStart = i;
  let lettersOnly = true;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      // A dot ends a label, which must not be empty.
      if (i === labelStart) return false;
      labels++;
      labelStart = i + 1;
      lettersOnly = true;
    } else if (c >= 97 && c <= 122) continue;
    else if ((c >= 48 && c <= 57) || c === 45) lettersOnly = false;
    else if (c === 47 || c === 63 || c === 35) break;
    else return false;
  }
  const last = i - labelStart;
  return labels > 0 && lettersOnly && last >= 2 && last <= 63;
}

/**
 * `SCHEME_FIRST.test(text)`, answered without the regex for the texts that
 * plainly fail it: one whose first character is ASCII but neither a letter
 * nor white space, or one with no `:` at all.
 */
export function mayHaveScheme(text: string): boolean {
  const c = text.charCodeAt(0);
  const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  if (!letter && c < 0x80 && c !== 32 && !(c >= 9 && c <= 13)) return false;
  return text.includes(":") && SCHEME_FIRST.test(text);
}

/**
 * Every character the normal form of `text` can hold, or `undefined` when
 * that cannot be bounded cheaply. Reading a command only removes quotes and
 * escapes, splits, reorders and joins words (space, newline), resolves paths
 * and lowercases program names (every alias in the program table is a part
 * of the name it replaces), so its characters come from the text, their
 * lower case, space and newline. What adds others: `$'…'` escapes (any
 * `$`) and characters outside printable ASCII, which bail out; and URLs,
 * whose hosts are respelled (IPv4 in decimal, IPv6 in hex, scheme and host
 * lowercased, the unknown-host marker) — bounded by `URL_ADDS` unless a `%`
 * could decode into anything.
 */
export function normalFormAlphabet(text: string, kind: "command" | "url", known?: CharSet): CharSet | undefined {
  const set = known === undefined ? foldedCharSet(text) : foldCase(known);
  if (set === undefined) return undefined;
  if (((set[0] as number) & ~TAB_NEWLINE_RETURN) !== 0 || ((set[3] as number) & DEL) !== 0) return undefined;
  if (kind === "command" && hasChar(set, DOLLAR)) return undefined;
  const urls = kind === "url" || (hasChar(set, COLON) && !onlyPlainUrls(text));
  if (urls && hasChar(set, PERCENT)) return undefined;
  // An IP address respelled can bring any digit or hex letter, but only a host with a digit reads as one (or a bracketed IPv6 one).
  const addresses = urls && (((set[1] as number) & DIGITS) !== 0 || hasChar(set, OPEN_BRACKET));
  addAll(set, COMMAND_ADDS);
  if (urls) addAll(set, URL_ADDS);
  if (addresses) addAll(set, ADDRESS_ADDS);
  return set;
}

/** A command of plain words whose URL-shaped words are all plain URLs, each its own canonical form. */
function onlyPlainUrls(command: string): boolean {
  if (!PLAIN_WORDS.test(command)) return false;
  for (const word of command.split(/[ \t]+/)) {
    if (word.includes(":") && URL_SHAPE.test(word) && !(PLAIN_URL.test(word) && !READINGS_DIFFER.test(word))) return false;
  }
  return true;
}

/** The only control characters (codes 0–31, word 0) a vouched-for text may hold. */
const TAB_NEWLINE_RETURN = (1 << 9) | (1 << 10) | (1 << 13);
/** Code 127, bit 31 of word 3. */
const DEL = 1 << 31;
const DOLLAR = 36;
const COLON = 58;
const PERCENT = 37;
const OPEN_BRACKET = 91;
/** Codes 48–57, bits 16–25 of word 1. */
const DIGITS = 0x03ff0000;
const COMMAND_ADDS = asciiCharSet(" \n") as CharSet;
const URL_ADDS = asciiCharSet(`.:/\n${UNKNOWN_HOST}`) as CharSet;
const ADDRESS_ADDS = asciiCharSet("0123456789abcdef.:") as CharSet;

function hasChar(set: CharSet, code: number): boolean {
  return ((set[code >> 5] as number) & (1 << (code & 31))) !== 0;
}

function addAll(set: CharSet, more: CharSet): void {
  for (let i = 0; i < 4; i++) set[i] = (set[i] as number) | (more[i] as number);
}

export function isArgv(value: JsonValue): value is string[] {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string");
}

/** One line per program the command runs, plainly and in canonical flag order. */
export function normalisedCommand(command: string): string {
  const lines: string[] = [];
  for (const inv of pipelinesOf(command).pipelines.flat(2)) {
    const args = inv.args.map((w) => collapse(w.text));
    lines.push([inv.program, ...args].join(" "));
    lines.push(canonicalFlags(inv.program, args));
    for (const a of args) if (URL_SHAPE.test(a)) for (const url of canonicalUrls(a)) lines.push(url);
  }
  return lines.join("\n");
}

/** `program -<sorted short flags> <sorted long flags> operands…`, absolute paths normalised. */
function canonicalFlags(program: string, args: readonly string[]): string {
  const short = new Set<string>();
  const long: string[] = [];
  const operands: string[] = [];
  let options = true;
  for (const a of args) {
    if (options && a === "--") options = false;
    else if (options && a.startsWith("--") && a.length > 2) long.push(a);
    else if (options && /^-[A-Za-z0-9]+$/.test(a)) for (const l of a.slice(1)) short.add(l);
    else operands.push(a.startsWith("/") ? lexicalPath(a) : a);
  }
  const parts = [program];
  if (short.size > 0) parts.push(`-${[...short].sort().join("")}`);
  // No spread: a 128 KiB command can hold more operands than a call may take arguments.
  for (const flag of long.sort()) parts.push(flag);
  for (const operand of operands) parts.push(operand);
  return parts.join(" ");
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ");
}

/** `scheme://host/rest` for each host reading, hosts in canonical spelling. */
export function canonicalUrls(url: string): string[] {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):[/\\]*/.exec(url);
  if (!scheme) return [url];
  const after = url.slice(scheme[0].length);
  const cut = after.search(/[/?#]/);
  const rest = cut === -1 ? "" : after.slice(cut);
  return urlHosts(url).map((host) => `${(scheme[1] as string).toLowerCase()}://${host}${rest}`);
}

/** The canonical-order form of a keyword that reads as one command with flags (`rm -rf /` → `rm -fr /`). */
function canonicalKeyword(keyword: string): string | undefined {
  const invs: Invocation[] = pipelinesOf(keyword).pipelines.flat(2);
  if (invs.length !== 1) return undefined;
  const inv = invs[0] as Invocation;
  const form = canonicalFlags(
    inv.program,
    inv.args.map((w) => collapse(w.text)),
  );
  return form === keyword ? undefined : form;
}

/** The memo key of a check's normalised call. */
const NORMALISED_CALL: object = {};

export interface NormalisedCall {
  action: Action;
  context: LazyCheckContext;
}

/** The action with its commands and URLs normalised where a rule could match them; `undefined` when that changes nothing. */
export function buildNormalisedCall(action: Action, context: CheckContext): NormalisedCall | undefined {
  const params = normalisedParams(action.parameters, context.normalisation, context instanceof LazyCheckContext ? context : undefined);
  if (params === undefined) return undefined;
  const normal: Action = { ...action, parameters: params };
  return { action: normal, context: new LazyCheckContext(normal) };
}

/**
 * `rule` judging the call as sent and, when that passes, its normalised form
 * (with `onNormal`, the same rule by default). The normalised form is built
 * only when the call as sent passed, once per check however many rules ask.
 * `reads` says what `onNormal` reads there, for the rule set's index.
 */
export function alsoOnNormalisedCall(rule: PolicyRule, reads: NormalisedReads, onNormal: readonly PolicyRule[] = [rule]): PolicyRule {
  return markSplitRule(
    {
      name: rule.name,
      ...(rule.tool !== undefined ? { tool: rule.tool } : {}),
      normalised: reads,
      evaluate(action, state, context) {
        const reason = rule.evaluate(action, state, context);
        if (reason !== undefined) return reason;
        const normal = context.once(NORMALISED_CALL, buildNormalisedCall);
        if (normal === undefined) return undefined;
        for (const r of onNormal) {
          const found = r.evaluate(normal.action, state, normal.context);
          if (found !== undefined) return found;
        }
        return undefined;
      },
    },
    { asSent: rule, onNormal },
  );
}

/** A `deny_keyword` rule that also matches the normalised call, the keyword also in canonical flag order. */
export function normalisedKeywordRule(keyword: string): PolicyRule {
  const rule = denyKeywordRule(keyword);
  const canonical = canonicalKeyword(keyword);
  const needles = canonical === undefined ? [keyword] : [keyword, canonical];
  return alsoOnNormalisedCall(rule, { needles, decisive: keyword }, canonical === undefined ? [rule] : [rule, denyKeywordRule(canonical)]);
}
