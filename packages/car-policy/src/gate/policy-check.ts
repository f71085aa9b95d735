/**
 * The policy-check gate: one tool call another agent proposes, judged against
 * the operator's policy files and CAR's stateless egress guard, answered as a
 * decision document. `car policy-check-hook` and the MCP `policy_check` tool
 * both call this, so the two can never disagree about a deny.
 *
 * Two sources, reported apart. `policy_rules`: the operator's declarative
 * rules, matched against the host's own tool name. `inspector:egress`: a
 * built-in guard nobody authored, run on the call mapped onto CAR's tool
 * names (`inspected_as`). The stateful repetition inspector is left out on
 * purpose: this gate sees only the calls a host routes through it, so its
 * history would be a partial view presented as a whole.
 *
 * `basis` separates "real rules ran and passed" from "nothing is configured",
 * so an unconfigured system never reads as a reviewed one. Rules are re-read
 * from disk on every call: an operator who adds a deny rule mid-session must
 * not find it unenforced until something restarts.
 */
import { type Action, cloneJson, emptyMap, getOwn, isJsonObject, type JsonObject, type JsonValue, setOwn, toolCall, traceRuleName } from "@car/ir";
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { PolicyEngine } from "../engine.ts";
import { loadPolicyDir } from "../files/load-policy-dir.ts";
import { PolicyRules } from "../files/policy-rules.ts";
import { EgressInspector } from "../inspectors/egress/egress-inspector.ts";
import { InspectorChain } from "../inspectors/inspector.ts";
import { isArgv } from "./normalised-call.ts";
import { argvToCommand } from "../rules/deny-command.ts";
import { lexicalPath } from "../lexical-path.ts";
import { patchPaths, resolvePatchPath } from "./patch-paths.ts";
import { type CarHomeOptions, policyDirs } from "./policy-dirs.ts";
import { asCarParams, inferredCarTool, mappingFor } from "./tool-map.ts";
import { unprovenReasons } from "./unproven.ts";
import type { UnprovenAnswer } from "../files/policy-rules.ts";

export interface Finding {
  source: string;
  rule: string;
  /** `ask`: the command is not proven safe and the policy's `unproven` setting is `ask`. */
  severity: "deny" | "warn" | "ask";
  reason: string;
}

/**
 * The gate's three answers (DECISIONS §23): `deny` (a rule, a proven
 * dangerous form, or `unproven = "deny"`), `ask` (a shell command the
 * reader cannot prove safe), `none` (proven safe, or nothing to prove).
 * `decision` keeps the seed's two values: an `ask` is `allow` there.
 */
export type GateAnswer = "deny" | "ask" | "none";

export interface PolicySource {
  path: string;
  exists: boolean;
  rules: number;
}

export type Basis = "denied_by_rule" | "passed_rules" | "no_rules_configured" | "policy_load_failed";

export interface GateDecision {
  decision: "allow" | "deny";
  answer: GateAnswer;
  /** What the policy answers for a command not proven safe (`unproven = …`, default `ask`). */
  unproven: UnprovenAnswer;
  basis: Exclude<Basis, "policy_load_failed">;
  tool: string;
  /** The CAR tool the inspectors ran as; `null` when no inspector reads this call. */
  inspected_as: string | null;
  findings: Finding[];
  rules_loaded: number;
  policy_sources: PolicySource[];
}

export interface GateLoadFailure {
  decision: "deny";
  answer: "deny";
  basis: "policy_load_failed";
  tool: string;
  findings: [];
  policy_sources: PolicySource[];
  load_errors: { path: string; error: string }[];
  advice: string;
}

export type PolicyCheckResult = GateDecision | GateLoadFailure;

/** The file-editing tool names an `apply_patch` is also checked under. */
const PATCH_ALIASES = ["apply_patch", "Write", "Edit"] as const;
/**
 * Host file-editing tools, each checked under its own name and as `Write`
 * and `Edit` on every path it touches, the path lexically normalised
 * (DECISIONS §17), with the key that holds the path.
 */
const FILE_EDIT_TOOLS: Readonly<Record<string, string>> = { Write: "file_path", Edit: "file_path", MultiEdit: "file_path", NotebookEdit: "notebook_path" };

/** Evaluates `tool`/`params` as proposed from `cwd`. */
export function policyCheck(tool: string, params: JsonValue, cwd: string, options: CarHomeOptions = {}): PolicyCheckResult {
  return policyCheckDirs(tool, params, policyDirs(cwd, options), cwd);
}

/** The policy files of a directory list, each read once: their rules merged, where they came from, and what would not load. */
export interface LoadedPolicies {
  merged: PolicyRules;
  sources: PolicySource[];
  loadErrors: { path: string; error: string }[];
  rulesLoaded: number;
}

/**
 * Reads and merges the policy files of `dirs`. A caller that needs the rules
 * for more than the check (the hook's sandbox wrapping) loads them here once
 * and passes them to `policyCheckDirs`.
 */
export function loadPolicies(dirs: readonly string[]): LoadedPolicies {
  const loaded: LoadedPolicies = { merged: new PolicyRules(), sources: [], loadErrors: [], rulesLoaded: 0 };
  for (const dir of dirs) {
    try {
      const rules = loadPolicyDir(dir);
      loaded.rulesLoaded += rules.len;
      loaded.sources.push({ path: dir, exists: existsSync(dir), rules: rules.len });
      loaded.merged.merge(rules);
    } catch (err) {
      // A file that will not parse is not "no rules": failing open on a typo
      // would enforce nothing while reporting a clean result.
      loaded.loadErrors.push({ path: dir, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return loaded;
}

/** `policyCheck` against an explicit directory list (its files read here, unless `loaded` has them already). */
export function policyCheckDirs(tool: string, params: JsonValue, dirs: readonly string[], cwd: string, loaded = loadPolicies(dirs)): PolicyCheckResult {
  const { merged, sources, loadErrors, rulesLoaded } = loaded;
  if (loadErrors.length > 0) {
    return {
      decision: "deny",
      answer: "deny",
      basis: "policy_load_failed",
      tool,
      findings: [],
      policy_sources: sources,
      load_errors: loadErrors,
      advice: "A policy file failed to load. Until it is fixed the gate cannot tell an allowed call from an ungoverned one, so it denies.",
    };
  }

  const findings: Finding[] = [];
  const seen = new Set<string>();
  const isPatch = tool === "apply_patch";
  if (isPatch || FILE_EDIT_TOOLS[tool] !== undefined) resolveAbsolutePatchRules(merged, cwd);
  const engine = new PolicyEngine();
  // A single call has no trace: trace rules are enforced by the runtime's TraceGate, and only noted here.
  merged.apply(engine, { traceRules: "ignore" });
  for (const r of merged.trace_rule) {
    if (r.tool === tool)
      findings.push({
        source: "policy_rules",
        rule: traceRuleName(r),
        severity: "warn",
        reason: "a trace rule governs this tool; it is enforced by the CAR runtime, not by this single-call check",
      });
  }
  const parameters = paramsObject(params);
  const checkRules = (action: Action) => {
    for (const v of engine.check(action)) {
      const key = `${v.policy_name}\u0000${v.reason}`;
      if (seen.has(key)) continue;
      seen.add(key);
      findings.push({ source: "policy_rules", rule: v.policy_name, severity: "deny", reason: v.reason });
    }
  };
  if (isPatch) {
    // Codex names the call `apply_patch` even when its matcher used Write/Edit,
    // so all three vocabularies see every path; one refused path refuses the
    // whole (atomic) patch.
    const command = parameters["command"];
    const paths = patchPaths(typeof command === "string" ? command : "");
    for (const alias of PATCH_ALIASES) {
      if (paths.length === 0) checkRules(gateAction(alias, parameters));
      for (const path of paths) {
        const withPath = cloneJson(parameters);
        setOwn(withPath, "file_path", resolvePatchPath(cwd, path));
        checkRules(gateAction(alias, withPath));
      }
    }
  } else {
    checkRules(gateAction(tool, parameters));
    const pathKey = FILE_EDIT_TOOLS[tool];
    const path = pathKey === undefined ? undefined : parameters[pathKey];
    if (pathKey !== undefined && path !== undefined) {
      if (typeof path !== "string") {
        findings.push({
          source: "policy_rules",
          rule: "path_normalisation",
          severity: "deny",
          reason: `parameter '${pathKey}' of ${tool} is not a path string, so path rules cannot be applied`,
        });
      } else {
        // `src/../.env`, `./.env`, `//.env`: rules see the path as written, normalised, and resolved.
        for (const alias of new Set([tool, "Write", "Edit"])) {
          for (const spelling of new Set([lexicalPath(path), resolvePatchPath(cwd, path)])) {
            const withPath = cloneJson(parameters);
            setOwn(withPath, "file_path", spelling);
            if (pathKey !== "file_path") setOwn(withPath, pathKey, spelling);
            checkRules(gateAction(alias, withPath));
          }
        }
      }
    }
  }

  // The built-in guard, on the call in CAR's vocabulary. Only a mapped tool can be denied by it.
  const mapping = mappingFor(tool);
  const inspectedAs = mapping ? mapping.car : (inferredCarTool(parameters) ?? null);
  if (inspectedAs !== null) {
    const inspectedParams = mapping ? asCarParams(mapping, parameters) : parameters;
    const chain = new InspectorChain().with(new EgressInspector());
    for (const { name, result } of chain.inspect(inspectedAs, inspectedParams)) {
      if (result.verdict === "allow") continue;
      const capped = result.verdict === "deny" && mapping === undefined;
      findings.push({
        source: `inspector:${name}`,
        rule: name,
        severity: capped ? "warn" : result.verdict,
        reason: capped
          ? `${result.reason} (warn only: \`${tool}\` is not a tool this gate maps, so it was inspected as \`${inspectedAs}\` from its parameters and an inspector cannot deny it)`
          : result.reason,
      });
    }
  }

  // The proof (unproven.ts): a shell command the reader cannot prove safe is answered as the policy says.
  const unproven = merged.unproven ?? "ask";
  // An `apply_patch` carries a patch in `command`, not a command line: its paths are what the rules judge.
  const command = inspectedAs === "shell" && !isPatch ? getOwn(mapping ? asCarParams(mapping, parameters) : parameters, "command") : undefined;
  if (typeof command === "string" && unproven !== "allow") {
    const reasons = unprovenReasons(command);
    if (reasons.length > 0) {
      findings.push({
        source: "gate:unproven",
        rule: "unproven",
        severity: unproven,
        reason: `not proven safe: ${reasons.join("; ")}`,
      });
    }
  }

  const denied = findings.some((f) => f.severity === "deny");
  return {
    decision: denied ? "deny" : "allow",
    answer: denied ? "deny" : findings.some((f) => f.severity === "ask") ? "ask" : "none",
    unproven,
    basis: denied ? "denied_by_rule" : rulesLoaded === 0 ? "no_rules_configured" : "passed_rules",
    tool,
    inspected_as: inspectedAs,
    findings,
    rules_loaded: rulesLoaded,
    policy_sources: sources,
  };
}

/**
 * Absolute `file_path` values in rules for the file-editing tools use the
 * same real spelling as the resolved patch targets (symlinks, `..`).
 * Substrings and regexes stay patterns.
 */
function resolveAbsolutePatchRules(rules: PolicyRules, cwd: string): void {
  const governs = (r: { tool: string; param: string }) => r.param === "file_path" && (PATCH_ALIASES as readonly string[]).includes(r.tool);
  rules.deny_tool_param = rules.deny_tool_param.map((r) =>
    governs(r) && typeof r.equals === "string" && isAbsolute(r.equals) ? { ...r, equals: resolvePatchPath(cwd, r.equals) } : r,
  );
  rules.allow_tool_param = rules.allow_tool_param.map((r) =>
    governs(r) ? { ...r, allow: r.allow.map((p) => (isAbsolute(p) ? resolvePatchPath(cwd, p) : p)) } : r,
  );
}

/**
 * The call's parameters as rules see them; a Codex argv `command`
 * (`["bash", "-lc", X]`) becomes the command line it runs.
 */
function paramsObject(params: JsonValue): JsonObject {
  const out = isJsonObject(params) ? cloneJson(params) : emptyMap();
  for (const key of ["command", "cmd"]) {
    const value = getOwn(out, key);
    if (value !== undefined && isArgv(value)) setOwn(out, key, argvToCommand(value));
  }
  // Codex's `exec_command` names its command line `cmd`: command rules read it as the command.
  const cmd = getOwn(out, "cmd");
  if (typeof cmd === "string" && getOwn(out, "command") === undefined) setOwn(out, "command", cmd);
  return out;
}

/** The synthetic action the operator's rules judge: the host's own tool name, id `policy-check`. */
function gateAction(tool: string, parameters: JsonObject): Action {
  return toolCall(tool, parameters, { id: "policy-check" });
}
