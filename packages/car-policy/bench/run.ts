/**
 * @car/policy benchmarks, each read as a ratio or a per-call cost measured in
 * this run (best of several alternating rounds):
 *
 *  1. `PolicyEngine.check` of one action against a 50-rule merged file set,
 *     side by side with the same rules written in Cedar and evaluated by
 *     `@cedar-policy/cedar-wasm` (policy set pre-parsed, so only the per-call
 *     cost is compared). Goal: at least 100× Cedar's throughput.
 *  1b. The same rules over a 1,000-action mix with fresh action objects each
 *     pass (`check-mix.ts`): the engine with its normalisation index, without
 *     it, with normalised matching off, a plain-JS evaluator (the floor) and
 *     Cedar, with the count of decisions on which they disagree (all 0).
 *     Goal: at least 400× Cedar.
 *  2. `policyCheck` in a warm process against a repository with 20 rules:
 *     µs per call, re-reading the rule files every call as the gate must.
 *
 * Cedar has no regular expressions; the five regex rules become `like`
 * patterns there, which is cheaper than what CAR evaluates, so the ratio
 * flatters Cedar.
 *
 * Run: `npm run bench` in packages/car-policy.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { preparsePolicySet, statefulIsAuthorized } from "@cedar-policy/cedar-wasm/nodejs";
import { toolCall } from "@car/ir";
import type { Action, JsonObject } from "@car/ir";
import { parsePolicyFile, PolicyEngine, policyCheck } from "../src/index.ts";
import { allowToolParamRule } from "../src/rules/allow-tool-param.ts";
import { denyKeywordRule } from "../src/rules/deny-keyword.ts";
import { denyToolRule } from "../src/rules/deny-tool.ts";
import { denyToolParamConditionRule } from "../src/rules/deny-tool-param.ts";
import { denyToolParamMatchingRule } from "../src/rules/deny-tool-param-matching.ts";
import { actionMix, freshCopies, plainEvaluator, type RuleSet } from "./check-mix.ts";

interface Rate {
  perSecond: number;
  microsPerCall: number;
}

/** Calls `fn` in batches for about `ms` milliseconds and reports the rate. */
function round(fn: () => unknown, ms: number): Rate {
  let calls = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 20; i++) fn();
    calls += 20;
    now = performance.now();
  }
  const seconds = (now - start) / 1000;
  return { perSecond: calls / seconds, microsPerCall: (seconds * 1e6) / calls };
}

/**
 * Alternates short rounds of each contender and keeps each one's best round,
 * so a burst of load from other processes on a shared machine penalises
 * neither side's figure more than the other's.
 */
function compare(fns: (() => unknown)[], rounds: number, ms: number): Rate[] {
  for (const fn of fns) round(fn, ms / 2); // warm-up
  const best = fns.map(() => ({ perSecond: 0, microsPerCall: Number.POSITIVE_INFINITY }));
  for (let r = 0; r < rounds; r++) {
    fns.forEach((fn, i) => {
      const rate = round(fn, ms);
      if (rate.perSecond > (best[i] as Rate).perSecond) best[i] = rate;
    });
  }
  return best;
}

const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: n < 10 ? 2 : 0 });

// ---- 1. check() vs Cedar, 50 rules -------------------------------------------

const DENIED_TOOLS = Array.from({ length: 20 }, (_, i) => `tool_${i}`);
const KEYWORDS = ["DROP TABLE", "rm -rf /", "mkfs", ":(){", "169.254.169.254", "BEGIN PRIVATE KEY", "/etc/shadow", "curl | sh", "chmod 777", "eval("];
const PARAM_RULES = Array.from({ length: 10 }, (_, i) => ({
  tool: i % 2 ? "http_request" : "shell",
  param: i % 2 ? "url" : "command",
  contains: `blocked-${i}`,
}));
const ALLOW_RULES = Array.from({ length: 5 }, (_, i) => ({ tool: `deploy_${i}`, param: "target", allow: ["staging", "preview"] }));
const REGEX_RULES = [
  { tool: "http_request", param: "body", matches: "sk-[A-Za-z0-9]{20,}", like: "*sk-*" },
  { tool: "http_request", param: "body", matches: "AKIA[0-9A-Z]{16}", like: "*AKIA*" },
  { tool: "http_request", param: "url", matches: "^https?://10\\.", like: "http*://10.*" },
  { tool: "http_request", param: "body", matches: "(?i)password\\s*=", like: "*password=*" },
  { tool: "http_request", param: "body", matches: "ghp_[A-Za-z0-9]{36}", like: "*ghp_*" },
];

const toml = [
  `deny_tool = ${JSON.stringify(DENIED_TOOLS)}`,
  `deny_keyword = ${JSON.stringify(KEYWORDS)}`,
  ...PARAM_RULES.map((r) => `[[deny_tool_param]]\ntool = "${r.tool}"\nparam = "${r.param}"\ncontains = "${r.contains}"`),
  ...ALLOW_RULES.map((r) => `[[allow_tool_param]]\ntool = "${r.tool}"\nparam = "${r.param}"\nallow = ${JSON.stringify(r.allow)}`),
  ...REGEX_RULES.map((r) => `[[deny_tool_param_matching]]\ntool = "${r.tool}"\nparam = "${r.param}"\nmatches = ${JSON.stringify(r.matches)}`),
].join("\n");
const rules = parsePolicyFile("bench.toml", toml);
if (rules.len !== 50) throw new Error(`expected 50 rules, got ${rules.len}`);
const engine = new PolicyEngine();
rules.apply(engine);

const cedarLike = (s: string) => s.replace(/\*/g, "\\*");
const cedarPolicies = [
  `permit(principal, action, resource);`,
  ...DENIED_TOOLS.map((t) => `forbid(principal, action == Action::"call", resource == Tool::"${t}");`),
  ...KEYWORDS.map((k) => `forbid(principal, action == Action::"call", resource) when { context.all_params like "*${cedarLike(k)}*" };`),
  ...PARAM_RULES.map(
    (r) =>
      `forbid(principal, action == Action::"call", resource == Tool::"${r.tool}") when { context.params has ${r.param} && context.params.${r.param} like "*${r.contains}*" };`,
  ),
  ...ALLOW_RULES.map(
    (r) =>
      `forbid(principal, action == Action::"call", resource == Tool::"${r.tool}") unless { context.params has ${r.param} && ${JSON.stringify(r.allow)}.contains(context.params.${r.param}) };`,
  ),
  ...REGEX_RULES.map(
    (r) =>
      `forbid(principal, action == Action::"call", resource == Tool::"${r.tool}") when { context.params has ${r.param} && context.params.${r.param} like "${r.like}" };`,
  ),
].join("\n");
const preparsed = preparsePolicySet("bench", { staticPolicies: cedarPolicies });
if (preparsed.type !== "success") throw new Error(`cedar: ${JSON.stringify(preparsed.errors)}`);

const parameters: JsonObject = {
  url: "https://api.example.org/v1/items?page=2",
  method: "POST",
  body: '{"name":"widget","count":3,"note":"nothing secret here"}',
};
const action: Action = toolCall("http_request", parameters, { id: "a1" });

/** One Cedar decision for the same call, building its request from the action as a host would. */
function cedarCheck(a: Action): boolean {
  const params: Record<string, string> = {};
  for (const k of Object.keys(a.parameters)) {
    const v = a.parameters[k];
    params[k] = typeof v === "string" ? v : JSON.stringify(v);
  }
  const answer = statefulIsAuthorized({
    principal: { type: "Agent", id: "agent" },
    action: { type: "Action", id: "call" },
    resource: { type: "Tool", id: a.tool ?? "" },
    context: { params, all_params: Object.values(params).join("\u0000") },
    preparsedPolicySetId: "bench",
    entities: [],
  });
  if (answer.type !== "success") throw new Error(JSON.stringify(answer.errors));
  return answer.response.decision === "allow";
}

// Both engines must agree on the benchmark call (allowed) and on a denied twin, or the comparison means nothing.
const deniedTwin: Action = { ...action, parameters: { ...parameters, body: "key=sk-abcdefghijklmnopqrstuvwxyz" } };
if (engine.check(action).length !== 0 || !cedarCheck(action)) throw new Error("the engines disagree on the allowed call");
if (engine.check(deniedTwin).length === 0 || cedarCheck(deniedTwin)) throw new Error("the engines disagree on the denied call");

const [ours, cedar] = compare([() => engine.check(action), () => cedarCheck(action)], 8, 200) as [Rate, Rate];
console.log("check() of one action against 50 merged rules");
console.log(`  @car/policy  ${fmt(ours.perSecond)} checks/s  (${fmt(ours.microsPerCall)} µs/check)`);
console.log(`  cedar-wasm   ${fmt(cedar.perSecond)} checks/s  (${fmt(cedar.microsPerCall)} µs/check)`);
console.log(`  ratio        ${fmt(ours.perSecond / cedar.perSecond)}× Cedar's throughput (goal ≥ 100×)`);

// ---- 1b. the same rules over a 1,000-action mix, fresh action objects each pass -----

/**
 * µs per decision over `passes` of the mix, each pass on fresh copies made
 * outside the timed part; alternating rounds, best round kept (as `compare`).
 */
function compareOnMix(fns: ((a: Action) => unknown)[], mix: readonly Action[], rounds: number, ms: number): number[] {
  const pass = (fn: (a: Action) => unknown): number => {
    const actions = freshCopies(mix);
    const start = performance.now();
    for (let i = 0; i < actions.length; i++) fn(actions[i] as Action);
    return performance.now() - start;
  };
  const roundOf = (fn: (a: Action) => unknown): number => {
    let spent = 0;
    let decisions = 0;
    while (spent < ms) {
      spent += pass(fn);
      decisions += mix.length;
    }
    return (spent * 1000) / decisions;
  };
  for (const fn of fns) roundOf(fn); // warm-up
  const best = fns.map(() => Number.POSITIVE_INFINITY);
  for (let r = 0; r < rounds; r++) fns.forEach((fn, i) => (best[i] = Math.min(best[i] as number, roundOf(fn))));
  return best;
}

const ruleSet: RuleSet = { deniedTools: DENIED_TOOLS, keywords: KEYWORDS, paramRules: PARAM_RULES, allowRules: ALLOW_RULES, regexRules: REGEX_RULES };
const mix = actionMix(ruleSet);
const plain = plainEvaluator(ruleSet);
const unindexed = new PolicyEngine({ normalisationIndex: false });
rules.apply(unindexed);
/** The same rules with normalised matching off: what the engine costs before any normalising. */
const asSentOnly = new PolicyEngine();
for (const t of DENIED_TOOLS) asSentOnly.register(denyToolRule(`deny_tool:${t}`, t));
for (const k of KEYWORDS) asSentOnly.register(denyKeywordRule(k));
for (const r of PARAM_RULES) asSentOnly.register(denyToolParamConditionRule(r.tool, r.param, { contains: r.contains }));
for (const r of ALLOW_RULES) asSentOnly.register(allowToolParamRule(r.tool, r.param, r.allow));
for (const r of REGEX_RULES) asSentOnly.register(denyToolParamMatchingRule(r.tool, r.param, r.matches, false));
const allowedBy = (e: PolicyEngine) => (a: Action) => e.check(a).length === 0;
// The reference engine (no index) runs last: it parses every command, and running it first would leave the
// code the engines share optimised for its calls rather than for the indexed engine's.
const decisions = {
  engine: mix.map(allowedBy(engine)),
  asSent: mix.map(allowedBy(asSentOnly)),
  cedar: mix.map(cedarCheck),
  plain: mix.map(plain),
};
const differ = (a: boolean[], b: boolean[]) => a.filter((x, i) => x !== b[i]).length;
const deniedCount = decisions.engine.filter((allowed) => !allowed).length;
const [mixOurs, mixAsSent, mixPlain, mixCedar] = compareOnMix([(a) => engine.check(a), (a) => asSentOnly.check(a), plain, cedarCheck], mix, 8, 250) as [
  number,
  number,
  number,
  number,
];
const unindexedDecisions = mix.map(allowedBy(unindexed));
const [mixUnindexed] = compareOnMix([(a) => unindexed.check(a)], mix, 4, 250) as [number];
console.log(`\ncheck() over a ${mix.length}-action mix (${deniedCount} denied), fresh action objects each pass, normalised matching on`);
console.log(`  @car/policy             ${fmt(mixOurs)} µs/decision  ${fmt(mixCedar / mixOurs)}× Cedar`);
console.log(`  @car/policy, no index   ${fmt(mixUnindexed)} µs/decision  ${fmt(mixCedar / mixUnindexed)}× Cedar (every call normalised)`);
console.log(`  @car/policy, as sent    ${fmt(mixAsSent)} µs/decision  ${fmt(mixCedar / mixAsSent)}× Cedar (normalised matching off)`);
console.log(`  plain JS (floor)        ${fmt(mixPlain)} µs/decision  ${fmt(mixCedar / mixPlain)}× Cedar`);
console.log(`  cedar-wasm              ${fmt(mixCedar)} µs/decision`);
console.log(
  `  disagreements           vs Cedar ${differ(decisions.engine, decisions.cedar)}, vs plain JS ${differ(decisions.engine, decisions.plain)}, vs no index ${differ(decisions.engine, unindexedDecisions)}, vs as sent ${differ(decisions.engine, decisions.asSent)} (each must be 0)`,
);
console.log(`  goal                    ≥ 400× Cedar: ${mixCedar / mixOurs >= 400 ? "met" : "NOT met"}`);

// ---- 2. policyCheck() warm, 20-rule repository ---------------------------------

const tmp = mkdtempSync(join(tmpdir(), "car-policy-bench-"));
try {
  const repo = join(tmp, "repo");
  const cwd = join(repo, "crates", "app");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(join(repo, ".car", "policies"), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(
    join(repo, ".car", "policies", "security.toml"),
    [
      `deny_tool = ${JSON.stringify(DENIED_TOOLS.slice(0, 8))}`,
      `deny_keyword = ${JSON.stringify(KEYWORDS.slice(0, 6))}`,
      ...PARAM_RULES.slice(0, 3).map((r) => `[[deny_tool_param]]\ntool = "Bash"\nparam = "command"\ncontains = "${r.contains}"`),
      `[[deny_tool_param_matching]]\ntool = "Bash"\nparam = "command"\nmatches = "sk-[A-Za-z0-9]{20,}"`,
      `[[deny_tool_param_matching]]\ntool = "WebFetch"\nparam = "url"\nmatches = "^https?://169\\\\.254\\\\."`,
      `[[rate_limit_tool]]\ntool = "Bash"\nmax_calls = 1000000000\ninterval_secs = 60`,
    ].join("\n"),
  );
  const carHome = join(tmp, "state");
  const params = { command: "git status && cargo test -p car-policy 2>&1 | tail -n 20" };
  const first = policyCheck("Bash", params, cwd, { carHome });
  if (first.decision !== "allow" || first.basis !== "passed_rules" || first.rules_loaded !== 20) {
    throw new Error(`unexpected gate answer: ${JSON.stringify(first)}`);
  }
  const [gate, fetchGate] = compare(
    [() => policyCheck("Bash", params, cwd, { carHome }), () => policyCheck("WebFetch", { url: "https://docs.rs/serde" }, cwd, { carHome })],
    6,
    200,
  ) as [Rate, Rate];
  console.log("\npolicyCheck() in a warm process, 20-rule repository (rules re-read every call)");
  console.log(`  Bash      ${fmt(gate.microsPerCall)} µs/call  (${fmt(gate.perSecond)} calls/s)`);
  console.log(`  WebFetch  ${fmt(fetchGate.microsPerCall)} µs/call  (${fmt(fetchGate.perSecond)} calls/s)`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
