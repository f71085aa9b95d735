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
 * The rules that run on this form are prohibitions whose matching only
 * grows with more text (keywords, `contains`, non-negated regexes);
 * `equals`, allowlists, negated regexes and rate limits see only the call as
 * sent.
 */
import { type Action, type JsonObject, type JsonValue, setOwn } from "@car/ir";
import { type CheckContext, LazyCheckContext } from "../check-context.ts";
import type { PolicyRule } from "../engine.ts";
import { type Invocation, pipelinesOf } from "../inspectors/egress/command-position.ts";
import { MAX_COMMAND_LENGTH } from "../inspectors/egress/egress-inspector.ts";
import { urlHosts } from "../inspectors/egress/hosts.ts";
import { denyKeywordRule } from "../rules/deny-keyword.ts";
import { argvToCommand } from "../rules/deny-command.ts";
import { lexicalPath } from "../lexical-path.ts";

const URL_SHAPE = /^[a-zA-Z][a-zA-Z0-9+.-]*:[/\\]*[^\s]+$/;
/** A URL already in canonical spelling (lowercase name ending in a letters-only label, no userinfo, port or trailing dot): nothing to normalise. */
const PLAIN_URL = /^https?:\/\/(?:[a-z0-9-]+\.)+[a-z]{2,63}(?:[/?#]|$)/;

/** The call's parameters with each command or URL replaced by its normalised form; `undefined` when nothing changes. */
export function normalisedParams(params: JsonObject): JsonObject | undefined {
  let out: JsonObject | undefined;
  for (const key of Object.keys(params)) {
    // Keys from Object.keys are own properties, so a plain read is an own read here.
    const value = params[key] as JsonValue;
    const normal = normalisedValue(key, value);
    if (normal === undefined) continue;
    out ??= { ...params };
    setOwn(out, key, normal);
  }
  return out;
}

function normalisedValue(key: string, value: JsonValue): string | undefined {
  if (key === "command") {
    const command = typeof value === "string" ? value : isArgv(value) ? argvToCommand(value) : undefined;
    return command === undefined || command.length > MAX_COMMAND_LENGTH ? undefined : normalisedCommand(command);
  }
  // Most parameters are not URLs, and most URLs are already plain: both cost one scan.
  if (typeof value !== "string" || !value.includes(":") || PLAIN_URL.test(value)) return undefined;
  const url = value.trim();
  return URL_SHAPE.test(url) ? canonicalUrls(url).join("\n") : undefined;
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
function canonicalUrls(url: string): string[] {
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

interface NormalisedCall {
  action: Action;
  context: CheckContext;
}

/** The action with its commands and URLs normalised; `undefined` when normalising changes nothing. */
function buildNormalisedCall(action: Action): NormalisedCall | undefined {
  const params = normalisedParams(action.parameters);
  if (params === undefined) return undefined;
  const normal: Action = { ...action, parameters: params };
  return { action: normal, context: new LazyCheckContext(normal) };
}

/**
 * `rule` judging the call as sent and, when that passes, its normalised form
 * (with `onNormal`, the same rule by default). The normalised form is built
 * only when the call as sent passed, once per check however many rules ask.
 */
export function alsoOnNormalisedCall(rule: PolicyRule, onNormal: readonly PolicyRule[] = [rule]): PolicyRule {
  return {
    name: rule.name,
    ...(rule.tool !== undefined ? { tool: rule.tool } : {}),
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
  };
}

/** A `deny_keyword` rule that also matches the normalised call, the keyword also in canonical flag order. */
export function normalisedKeywordRule(keyword: string): PolicyRule {
  const rule = denyKeywordRule(keyword);
  const canonical = canonicalKeyword(keyword);
  return alsoOnNormalisedCall(rule, canonical === undefined ? [rule] : [rule, denyKeywordRule(canonical)]);
}
