/**
 * One `.car/policies/*.toml` file → `PolicyRules`. Strict on purpose: a typo
 * in a security rule must surface, so a malformed document, an unknown key, a
 * value of the wrong type, or a malformed `[[trace_rule]]` is a
 * `PolicyLoadError` naming the file — never a rule quietly dropped.
 */
import { emptyMap, type JsonValue, setOwn } from "@car/ir";
import { parse, TomlDate } from "smol-toml";
import { PolicyLoadError } from "./policy-load-error.ts";
import type { DenyCommandSpec } from "../rules/deny-command.ts";
import { PolicyRules, UNPROVEN_ANSWERS, type UnprovenAnswer } from "./policy-rules.ts";
import { traceRuleFrom } from "../trace/trace-rule-spec.ts";
import { sandboxSpecFrom } from "../sandbox/sandbox-spec.ts";

type Table = Record<string, unknown>;

export function parsePolicyFile(file: string, text: string): PolicyRules {
  let doc: Table;
  try {
    // An editor's UTF-8 byte-order mark is not TOML, and not a reason to refuse the file.
    doc = parse(text.startsWith("\uFEFF") ? text.slice(1) : text) as Table;
  } catch (err) {
    throw new PolicyLoadError(file, `not valid TOML: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const fail = (problem: string): never => {
    throw new PolicyLoadError(file, problem);
  };
  const rules = new PolicyRules();
  for (const key of Object.keys(doc)) {
    const value = doc[key];
    switch (key) {
      case "deny_tool":
        rules.deny_tool = stringList(value, key, fail);
        break;
      case "deny_keyword":
        rules.deny_keyword = stringList(value, key, fail);
        break;
      case "deny_tool_param":
        rules.deny_tool_param = tables(value, key, fail).map((t, i) => {
          const at = `${key}[${i}]`;
          onlyKeys(t, at, ["tool", "param", "equals", "contains"], fail);
          return {
            tool: str(t, "tool", at, fail),
            param: str(t, "param", at, fail),
            ...(t["equals"] !== undefined ? { equals: toJson(t["equals"]) } : {}),
            ...(t["contains"] !== undefined ? { contains: str(t, "contains", at, fail) } : {}),
          };
        });
        break;
      case "allow_tool_param":
        rules.allow_tool_param = tables(value, key, fail).map((t, i) => {
          const at = `${key}[${i}]`;
          onlyKeys(t, at, ["tool", "param", "allow"], fail);
          return {
            tool: str(t, "tool", at, fail),
            param: str(t, "param", at, fail),
            allow: t["allow"] === undefined ? [] : stringList(t["allow"], `${at}.allow`, fail),
          };
        });
        break;
      case "deny_tool_param_matching":
        rules.deny_tool_param_matching = tables(value, key, fail).map((t, i) => {
          const at = `${key}[${i}]`;
          onlyKeys(t, at, ["tool", "param", "matches", "negate"], fail);
          const negate = t["negate"] ?? false;
          if (typeof negate !== "boolean") fail(`${at}.negate must be a boolean`);
          return {
            tool: str(t, "tool", at, fail),
            param: str(t, "param", at, fail),
            matches: str(t, "matches", at, fail),
            negate: negate as boolean,
          };
        });
        break;
      case "deny_command":
        rules.deny_command = tables(value, key, fail).map((t, i) => readDenyCommandSpec(t, `${key}[${i}]`, fail));
        break;
      case "rate_limit_tool":
        rules.rate_limit_tool = tables(value, key, fail).map((t, i) => {
          const at = `${key}[${i}]`;
          onlyKeys(t, at, ["tool", "max_calls", "interval_secs"], fail);
          const maxCalls = t["max_calls"];
          const interval = t["interval_secs"];
          if (typeof maxCalls !== "number" || !Number.isSafeInteger(maxCalls) || maxCalls < 0) {
            fail(`${at}.max_calls must be a non-negative integer`);
          }
          if (typeof interval !== "number" || !Number.isFinite(interval) || interval <= 0) {
            fail(`${at}.interval_secs must be a positive number of seconds`);
          }
          return { tool: str(t, "tool", at, fail), max_calls: maxCalls as number, interval_secs: interval as number };
        });
        break;
      case "unproven":
        if (typeof value !== "string" || !(UNPROVEN_ANSWERS as readonly string[]).includes(value))
          fail(`unproven must be one of ${UNPROVEN_ANSWERS.map((a) => `"${a}"`).join(", ")}`);
        rules.unproven = value as UnprovenAnswer;
        break;
      case "trace_rule":
        rules.trace_rule = tables(value, key, fail).map((t, i) => traceRuleFrom(t, `${key}[${i}]`, fail));
        break;
      case "sandbox": {
        const spec = sandboxSpecFrom(value, fail);
        if (spec !== undefined) rules.sandbox.push(spec);
        break;
      }
      default:
        fail(`unknown key '${key}'`);
    }
  }
  return rules;
}

type Fail = (problem: string) => never;

/** The fields of a `deny_command` rule that a policy file and a `PolicyDefinition` (the wire) share. */
export const DENY_COMMAND_FIELDS = ["program", "subcommand", "flags", "args", "tool", "param"] as const;

/**
 * A `deny_command` spec from a table of exactly its fields, for a file's
 * `[[deny_command]]` and for a registered definition; `fail` words the
 * error for its source (a `PolicyLoadError`, a `CarError`).
 */
export function readDenyCommandSpec(t: Table, at: string, fail: Fail): DenyCommandSpec {
  onlyKeys(t, at, DENY_COMMAND_FIELDS, fail);
  return {
    program: str(t, "program", at, fail),
    ...(t["subcommand"] !== undefined ? { subcommand: str(t, "subcommand", at, fail) } : {}),
    ...(t["flags"] !== undefined ? { flags: stringList(t["flags"], `${at}.flags`, fail) } : {}),
    ...(t["args"] !== undefined ? { args: stringList(t["args"], `${at}.args`, fail) } : {}),
    ...(t["tool"] !== undefined ? { tool: str(t, "tool", at, fail) } : {}),
    ...(t["param"] !== undefined ? { param: str(t, "param", at, fail) } : {}),
  };
}

function stringList(value: unknown, at: string, fail: Fail): string[] {
  if (!Array.isArray(value)) return fail(`${at} must be an array of strings`);
  for (const v of value) if (typeof v !== "string") fail(`${at} must be an array of strings`);
  return value as string[];
}

function tables(value: unknown, at: string, fail: Fail): Table[] {
  if (!Array.isArray(value)) return fail(`${at} must be an array of tables ([[${at}]])`);
  for (const v of value) if (!isTable(v)) fail(`${at} must be an array of tables ([[${at}]])`);
  return value as Table[];
}

function isTable(v: unknown): v is Table {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function onlyKeys(t: Table, at: string, allowed: readonly string[], fail: Fail): void {
  for (const k of Object.keys(t)) if (!allowed.includes(k)) fail(`unknown key '${k}' in ${at}`);
}

function str(t: Table, key: string, at: string, fail: Fail): string {
  const v = t[key];
  if (v === undefined) return fail(`${at}.${key} is required`);
  if (typeof v !== "string") return fail(`${at}.${key} must be a string`);
  return v;
}

/** TOML data as JSON: dates become their TOML text, tables become prototype-free maps. */
function toJson(value: unknown): JsonValue {
  if (value instanceof TomlDate) return value.toISOString();
  if (Array.isArray(value)) return value.map(toJson);
  if (isTable(value)) {
    const out = emptyMap();
    for (const k of Object.keys(value)) setOwn(out, k, toJson(value[k]));
    return out;
  }
  return value as JsonValue;
}
