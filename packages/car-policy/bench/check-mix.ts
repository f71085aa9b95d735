/**
 * The 50-rule set of `run.ts` judged over a 1,000-action mix, with fresh
 * action objects every pass (so nothing can be remembered by identity), by
 * three evaluators side by side in one run:
 *
 *  - `PolicyEngine.check` with the rules as a policy file lowers them
 *    (normalised matching on: keywords, `contains` and regexes also judge
 *    the call with its commands and URLs respelled plainly);
 *  - Cedar (`@cedar-policy/cedar-wasm`, policy set pre-parsed);
 *  - a plain-JS evaluator of the same rules, hand-written with nothing
 *    shared with the engine: the floor a JavaScript check can reach.
 *
 * Every decision of every evaluator is compared once before timing; the
 * agreement columns count the actions where two of them decide differently,
 * and must be 0 for the ratios to mean anything.
 */
import type { Action, JsonObject } from "@car/ir";
import { toolCall } from "@car/ir";

export interface RuleSet {
  deniedTools: readonly string[];
  keywords: readonly string[];
  paramRules: readonly { tool: string; param: string; contains: string }[];
  allowRules: readonly { tool: string; param: string; allow: readonly string[] }[];
  regexRules: readonly { tool: string; param: string; matches: string }[];
}

/** A small deterministic generator, so every run judges the same mix. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const COMMANDS = [
  "git status",
  "git diff --stat HEAD~1",
  "ls -la src",
  "npm test -- --watch=false",
  "pnpm -r build",
  "cargo test -p car-policy 2>&1 | tail -n 20",
  "grep -rn TODO src | head -n 50",
  "cat package.json",
  "docker ps -a",
  "kubectl get pods -n staging",
  "make -j4 all",
  "sed -n 1,40p README.md",
  "echo done",
  "curl -sS https://api.example.org/v1/health",
  "node scripts/check.js --fast",
  "python3 -m pytest -q tests/unit",
];
const URLS = [
  "https://api.example.org/v1/items?page=2",
  "https://docs.example.com/guide",
  "https://cdn.example.net/assets/app.js",
  "http://10.0.0.5/admin",
  "https://api.example.org:8443/v2/orders",
  "https://registry.npmjs.org/left-pad",
];
const BODIES = [
  '{"name":"widget","count":3,"note":"nothing secret here"}',
  '{"query":"select 1","limit":10}',
  "plain text body with no secrets in it at all",
  '{"items":[1,2,3],"tags":["a","b"]}',
];

/** The mix: mostly allowed calls of everyday tools, with a denial of every kind mixed in. */
export function actionMix(rules: RuleSet, size = 1000): Action[] {
  const rand = lcg(41);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const out: Action[] = [];
  for (let i = 0; i < size; i++) {
    const r = rand();
    let tool: string;
    let parameters: JsonObject;
    if (r < 0.3) {
      tool = "http_request";
      parameters = { url: pick(URLS), method: pick(["GET", "POST", "PUT"]), body: pick(BODIES) };
    } else if (r < 0.55) {
      tool = "shell";
      parameters = { command: pick(COMMANDS), cwd: "/work/repo" };
    } else if (r < 0.65) {
      tool = `deploy_${Math.floor(rand() * 5)}`;
      parameters = { target: pick(["staging", "preview", "staging", "production"]) };
    } else if (r < 0.72) {
      tool = pick(rules.deniedTools);
      parameters = { arg: "x" };
    } else if (r < 0.87) {
      tool = "read_file";
      parameters = { path: pick(["src/index.ts", "README.md", "/etc/hosts", "docs/guide.md"]) };
    } else {
      tool = "search";
      parameters = { query: pick(["policy engine", "cedar", "rate limit"]), limit: 20, exact: false };
    }
    // About one call in twelve carries something a rule denies.
    if (rand() < 0.08) {
      const d = rand();
      if (d < 0.3) parameters = { ...parameters, note: `please ${pick(rules.keywords)} now` };
      else if (d < 0.6 && tool === "shell") parameters = { ...parameters, command: `echo blocked-${2 * Math.floor(rand() * 5)}` };
      else if (d < 0.6 && tool === "http_request") parameters = { ...parameters, url: `https://x.example.org/blocked-${2 * Math.floor(rand() * 5) + 1}` };
      else if (tool === "http_request")
        parameters = { ...parameters, body: pick(["key=sk-abcdefghijklmnopqrstuvwxyz", "password=hunter2", "AKIAABCDEFGHIJKLMNOP"]) };
    }
    out.push(toolCall(tool, parameters, { id: `a${i}` }));
  }
  return out;
}

/** Fresh copies of `mix`: new action and parameter objects, the same strings. */
export function freshCopies(mix: readonly Action[]): Action[] {
  return mix.map((a) => ({ ...a, parameters: { ...a.parameters } }));
}

/** The same rules, evaluated as directly as JavaScript allows: `true` when the call is allowed. */
export function plainEvaluator(rules: RuleSet): (action: Action) => boolean {
  const denied = new Set(rules.deniedTools);
  const keywords = rules.keywords;
  const byTool = new Map<string, ((params: JsonObject) => boolean)[]>();
  const add = (tool: string, deny: (params: JsonObject) => boolean) => {
    const list = byTool.get(tool);
    if (list) list.push(deny);
    else byTool.set(tool, [deny]);
  };
  const text = (v: unknown): string | undefined => (v === undefined ? undefined : typeof v === "string" ? v : JSON.stringify(v));
  for (const r of rules.paramRules) add(r.tool, (p) => text(p[r.param])?.includes(r.contains) === true);
  for (const r of rules.allowRules) add(r.tool, (p) => !r.allow.includes(text(p[r.param]) as string));
  for (const r of rules.regexRules) {
    const flags = r.matches.startsWith("(?i)") ? "i" : "";
    const re = new RegExp(flags ? r.matches.slice(4) : r.matches, flags);
    add(r.tool, (p) => {
      const t = text(p[r.param]);
      return t !== undefined && re.test(t);
    });
  }
  return (action) => {
    const tool = action.tool ?? "";
    if (denied.has(tool)) return false;
    const params = action.parameters;
    for (const key in params) {
      const t = text(params[key]) as string;
      for (const k of keywords) if (t.includes(k)) return false;
    }
    const specific = byTool.get(tool);
    if (specific) for (const deny of specific) if (deny(params)) return false;
    return true;
  };
}
