/**
 * `car policy check` asks the gate about one tool call, exactly as the hook
 * and the MCP `policy_check` tool do, and prints its decision document.
 * `car policy lint` loads policy files one by one and lists the rules each
 * defines, or the error that names the broken file.
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { CarError, ERROR_CODES, isJsonObject, type JsonValue } from "@car/ir";
import { isDangling, isPolicyFileName, parsePolicyFile, PolicyEngine, PolicyRules, readPolicyFile, TraceGate, type UnprovenAnswer } from "@car/policy";
import { describeSandboxSpec, policyCheck, policyDirs } from "@car/policy/gate";
import { expectPositionals, parseArgs, usageError } from "@car/server/argv";
import { resolveCarHome } from "@car/server/home";
import { println } from "../io.ts";
import { colorEnabled, colors } from "../render/color.ts";

export const usage = `Usage: car policy check --tool <TOOL> [--params <JSON>] [--cwd <DIR>]
       car policy lint [DIR] [--json]

check  Evaluates one tool call with the policy-check gate (the same one the
       PreToolUse hook and the MCP policy_check tool use) and prints its
       decision document. Policies: <CAR_HOME>/policies, then every
       .car/policies from the repository root down to --cwd (default: here).
       Its "answer" is deny, ask (a shell command the gate cannot prove
       safe) or none. Exit status: 0 allow (an ask included), 1 deny, 2 a
       policy file does not load.

lint   Loads each *.toml in DIR — or, without DIR, in every directory the
       gate reads from here — and lists the rules it defines, or the error
       naming the file; flags regexes that do not compile and deny_command
       rules that can never match, and shows what the gate answers for a
       shell command it cannot prove safe (unproven = "ask", the default,
       "deny" or "allow"; the strictest setting among the files wins).
       Exit status: 0 all load, 1 a rule is flagged, 2 some file does not load.`;

export async function main(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "check") return check(rest);
  if (sub === "lint") return lint(rest);
  throw usageError(sub === undefined ? "missing subcommand: check or lint" : `unknown subcommand '${sub}': expected check or lint`);
}

async function check(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { tool: { type: "string" }, params: { type: "string" }, cwd: { type: "string" } });
  expectPositionals(positionals, []);
  if (options.tool === undefined || options.tool === "") throw usageError("--tool is required");
  let params: JsonValue = {};
  if (options.params !== undefined) {
    try {
      params = JSON.parse(options.params) as JsonValue;
    } catch (err) {
      throw usageError(`--params is not valid JSON: ${(err as Error).message}`);
    }
    // The gate reads a non-object as no parameters at all, so a typo here would silently check nothing.
    if (!isJsonObject(params)) throw usageError("--params must be a JSON object of the tool's parameters");
  }
  const decision = policyCheck(options.tool, params, resolve(options.cwd ?? "."), { carHome: resolveCarHome() });
  println(JSON.stringify(decision, null, 2));
  if (decision.basis === "policy_load_failed") return ERROR_CODES.policy_load_failed.exit;
  return decision.decision === "deny" ? ERROR_CODES.policy_denied.exit : 0;
}

interface LintedFile {
  path: string;
  /** How many rules the file defines. */
  rule_count: number;
  /** Their stable names (two rules on the same tool and parameter share one). */
  rules: string[];
  error?: string;
  /** Patterns that do not compile: the file loads, but each such rule denies every call to its tool. */
  pattern_errors?: { rule: string; pattern: string; error: string }[];
  /** `deny_command` rules that can never match as written. */
  rule_problems?: { rule: string; error: string }[];
  /** The file's `unproven` setting, when it has one. */
  unproven?: UnprovenAnswer;
}

interface LintedDir {
  path: string;
  exists: boolean;
  files: LintedFile[];
}

async function lint(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { json: { type: "boolean" } });
  const [dir] = positionals.length === 0 ? [undefined] : expectPositionals(positionals, ["DIR"]);
  const dirs = dir !== undefined ? [resolve(dir)] : policyDirs(process.cwd(), { carHome: resolveCarHome() });
  const linted = await Promise.all(dirs.map(lintDir));
  const errors = linted.flatMap((d) => d.files.filter((f) => f.error !== undefined));
  const badPatterns = linted.flatMap((d) => d.files.flatMap((f) => f.pattern_errors ?? []));
  const ruleProblems = linted.flatMap((d) => d.files.flatMap((f) => f.rule_problems ?? []));
  const rules = linted.reduce((n, d) => n + d.files.reduce((m, f) => m + f.rule_count, 0), 0);
  const unproven = effectiveUnproven(linted);
  if (options.json) {
    println(
      JSON.stringify(
        {
          directories: linted,
          rules_loaded: rules,
          unproven,
          errors: errors.length,
          pattern_errors: badPatterns.length,
          rule_problems: ruleProblems.length,
        },
        null,
        2,
      ),
    );
  } else {
    const c = colors(colorEnabled(process.stdout));
    for (const d of linted) {
      println(c.bold(d.path) + (d.exists ? "" : c.dim(" (does not exist)")));
      if (d.exists && d.files.length === 0) println(`  ${c.dim("no *.toml files")}`);
      for (const f of d.files) {
        if (f.error !== undefined) {
          println(`  ${c.red("error")} ${f.error}`);
          continue;
        }
        println(`  ${f.path}: ${f.rule_count} rule${f.rule_count === 1 ? "" : "s"}`);
        if (f.unproven !== undefined) println(`    unproven = "${f.unproven}"`);
        for (const r of f.rules) println(`    ${r}`);
        for (const p of f.rule_problems ?? []) println(`    ${c.red("error")} ${p.rule}: ${p.error}; the rule can never match`);
        for (const p of f.pattern_errors ?? [])
          println(`    ${c.red("error")} ${p.rule}: pattern ${JSON.stringify(p.pattern)} does not compile (${p.error}); every call to its tool is denied`);
      }
    }
    const fromFiles = linted.some((d) => d.files.some((f) => f.unproven !== undefined));
    println(`unproven = "${unproven}"${fromFiles ? "" : c.dim(" (the default)")}: a shell command the gate cannot prove safe is ${UNPROVEN_MEANING[unproven]}`);
    if (errors.length > 0) println(c.red(`${errors.length} file${errors.length === 1 ? "" : "s"} failed to load; every call is denied until fixed`));
    else if (badPatterns.length > 0)
      println(
        c.red(
          `${rules} rule${rules === 1 ? "" : "s"} loaded; ${badPatterns.length} pattern${badPatterns.length === 1 ? "" : "s"} do not compile and deny every call to their tool`,
        ),
      );
    else if (ruleProblems.length > 0)
      println(
        c.red(
          `${rules} rule${rules === 1 ? "" : "s"} loaded; ${ruleProblems.length} deny_command problem${ruleProblems.length === 1 ? "" : "s"}: those rules can never match`,
        ),
      );
    else println(c.green(`${rules} rule${rules === 1 ? "" : "s"} loaded`));
  }
  if (errors.length > 0) return ERROR_CODES.policy_load_failed.exit;
  return badPatterns.length > 0 || ruleProblems.length > 0 ? 1 : 0;
}

const UNPROVEN_MEANING: Record<UnprovenAnswer, string> = {
  ask: "put to the user (Claude Code asks; Codex, which cannot ask, denies)",
  deny: "denied",
  allow: "let through to the host's own permission flow",
};

/** What the gate answers for a command it cannot prove safe, across every file that loaded: the strictest setting. */
function effectiveUnproven(linted: LintedDir[]): UnprovenAnswer {
  const merged = new PolicyRules();
  for (const d of linted) {
    for (const f of d.files) {
      if (f.unproven === undefined) continue;
      const one = new PolicyRules();
      one.unproven = f.unproven;
      merged.merge(one);
    }
  }
  return merged.unproven ?? "ask";
}

async function lintDir(dir: string): Promise<LintedDir> {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((e) => isPolicyFileName(e.name) && !e.isDirectory())
      .map((e) => e.name)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && !isDangling(dir)) return { path: dir, exists: false, files: [] };
    return { path: dir, exists: true, files: [{ path: dir, rule_count: 0, rules: [], error: `${dir}: cannot be read: ${(err as Error).message}` }] };
  }
  const files: LintedFile[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      const engine = new PolicyEngine();
      const traceGate = new TraceGate();
      const rules = parsePolicyFile(file, readPolicyFile(file));
      rules.apply(engine, { traceGate });
      const patternErrors = rules.patternErrors();
      const ruleProblems = rules.commandRuleProblems();
      files.push({
        path: file,
        rule_count: engine.size + traceGate.size + rules.sandbox.length,
        rules: [...engine.names(), ...traceGate.names(), ...rules.sandbox.map(describeSandboxSpec)],
        ...(patternErrors.length > 0 ? { pattern_errors: patternErrors } : {}),
        ...(ruleProblems.length > 0 ? { rule_problems: ruleProblems } : {}),
        ...(rules.unproven !== undefined ? { unproven: rules.unproven } : {}),
      });
    } catch (err) {
      files.push({ path: file, rule_count: 0, rules: [], error: err instanceof CarError ? err.message : `policy file ${file}: ${(err as Error).message}` });
    }
  }
  return { path: dir, exists: true, files };
}
