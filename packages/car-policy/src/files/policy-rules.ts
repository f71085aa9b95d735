/**
 * The declarative rule set of `.car/policies/*.toml`: plain data, merged across
 * files and directories, then lowered onto a `PolicyEngine`. Merging only
 * concatenates — every kind is a prohibition, so more rules can only deny more.
 */
import { CarError } from "@car/ir";
import type { Clock, JsonValue, TraceRule } from "@car/ir";
import type { PolicyEngine } from "../engine.ts";
import { allowToolParamRule } from "../rules/allow-tool-param.ts";
import { alsoOnNormalisedCall, normalisedKeywordRule } from "../gate/normalised-call.ts";
import { denyToolRule } from "../rules/deny-tool.ts";
import { denyToolParamConditionRule } from "../rules/deny-tool-param.ts";
import { compilePattern, denyToolParamMatchingRule } from "../rules/deny-tool-param-matching.ts";
import { type DenyCommandSpec, denyCommandProblems, denyCommandRule, denyCommandRuleName } from "../rules/deny-command.ts";
import { literalPrefilter } from "../rules/literal-prefilter.ts";
import { rateLimitToolRule } from "../rules/rate-limit-tool.ts";
import type { TraceGate } from "../trace/trace-gate.ts";
import type { SandboxSpec } from "../sandbox/sandbox-spec.ts";

export type { DenyCommandSpec };

export interface DenyToolParamSpec {
  tool: string;
  param: string;
  equals?: JsonValue;
  contains?: string;
}

export interface AllowToolParamSpec {
  tool: string;
  param: string;
  allow: string[];
}

export interface DenyToolParamMatchingSpec {
  tool: string;
  param: string;
  matches: string;
  negate: boolean;
}

export interface RateLimitToolSpec {
  tool: string;
  max_calls: number;
  interval_secs: number;
}

export interface ApplyOptions {
  /** The clock rate-limit windows read; defaults to wall time. */
  clock?: Clock;
  /**
   * Where `trace_rule`s go. A rule set holding trace rules refuses to apply
   * without one (they would silently not apply) unless `traceRules` is
   * `"ignore"`, for a caller that judges single calls with no trace at all.
   */
  traceGate?: TraceGate;
  traceRules?: "ignore";
}

/**
 * What the policy-check gate answers for a shell command it cannot prove
 * safe (`unproven = "…"` in a policy file; `ask` when no file sets it).
 */
export const UNPROVEN_ANSWERS = ["ask", "deny", "allow"] as const;
export type UnprovenAnswer = (typeof UNPROVEN_ANSWERS)[number];

export class PolicyRules {
  /** `unproven` as a file set it; merged sets keep the strictest (`deny` over `ask` over `allow`). */
  unproven: UnprovenAnswer | undefined = undefined;
  deny_tool: string[] = [];
  deny_keyword: string[] = [];
  deny_tool_param: DenyToolParamSpec[] = [];
  allow_tool_param: AllowToolParamSpec[] = [];
  deny_tool_param_matching: DenyToolParamMatchingSpec[] = [];
  rate_limit_tool: RateLimitToolSpec[] = [];
  trace_rule: TraceRule[] = [];
  deny_command: DenyCommandSpec[] = [];
  /**
   * What each file's `sandbox` key asks for (one entry per file that asks).
   * Not an engine rule: whoever runs commands enforces it (`car run`'s program
   * tools, `car sandbox-exec`, the hook's wrap), see `sandboxSettings`.
   */
  sandbox: SandboxSpec[] = [];

  /** Appends `other`'s rules after this set's (file order is merge order). */
  merge(other: PolicyRules): this {
    appendAll(this.deny_tool, other.deny_tool);
    appendAll(this.deny_keyword, other.deny_keyword);
    appendAll(this.deny_tool_param, other.deny_tool_param);
    appendAll(this.allow_tool_param, other.allow_tool_param);
    appendAll(this.deny_tool_param_matching, other.deny_tool_param_matching);
    appendAll(this.rate_limit_tool, other.rate_limit_tool);
    appendAll(this.trace_rule, other.trace_rule);
    appendAll(this.deny_command, other.deny_command);
    // Reading more files never allows what fewer would stop: the strictest setting wins.
    if (other.unproven !== undefined) this.unproven = strictest(this.unproven, other.unproven);
    appendAll(this.sandbox, other.sandbox);
    return this;
  }

  /** How many rules the set holds; each list entry is one rule. */
  get len(): number {
    return (
      this.deny_tool.length +
      this.deny_keyword.length +
      this.deny_tool_param.length +
      this.allow_tool_param.length +
      this.deny_tool_param_matching.length +
      this.rate_limit_tool.length +
      this.deny_command.length +
      this.trace_rule.length +
      this.sandbox.length
    );
  }

  /**
   * The `deny_tool_param_matching` patterns that do not compile. Loading
   * still succeeds (such a rule denies every call to its tool, failing
   * closed), so this is how a linter tells the author before the denials do.
   */
  patternErrors(): { rule: string; pattern: string; error: string }[] {
    const out: { rule: string; pattern: string; error: string }[] = [];
    for (const r of this.deny_tool_param_matching) {
      const compiled = compilePattern(r.matches);
      if ("error" in compiled) out.push({ rule: `deny_tool_param_matching:${r.tool}.${r.param}`, pattern: r.matches, error: compiled.error });
    }
    return out;
  }

  /**
   * `deny_command` rules written so they can never match (a short-flag
   * cluster in `flags`, a program name with a space in it): they load, and
   * would deny nothing, so a linter has to say so.
   */
  commandRuleProblems(): { rule: string; error: string }[] {
    return this.deny_command.flatMap((r) => denyCommandProblems(r).map((error) => ({ rule: denyCommandRuleName(r), error })));
  }

  /**
   * Registers one engine rule per entry. Regexes compile here, once; each
   * rate limit gets its own window, starting empty. Keywords, `contains` and
   * non-negated regexes also judge the normalised call (`normalised-call.ts`,
   * DECISIONS §17): `rm -r -f /` and `c''url` are what rules on `rm -rf /`
   * and `curl` are about.
   */
  apply(engine: PolicyEngine, options: ApplyOptions = {}): void {
    if (this.trace_rule.length > 0 && options.traceGate === undefined && options.traceRules !== "ignore") {
      throw new CarError("invalid_params", `${this.trace_rule.length} trace rule(s) need a TraceGate to be enforced; pass ApplyOptions.traceGate`);
    }
    for (const tool of this.deny_tool) engine.register(denyToolRule(`deny_tool:${tool}`, tool));
    for (const keyword of this.deny_keyword) engine.register(normalisedKeywordRule(keyword));
    for (const r of this.deny_tool_param) {
      const rule = denyToolParamConditionRule(r.tool, r.param, {
        ...(r.equals !== undefined ? { equals: r.equals } : {}),
        ...(r.contains !== undefined ? { contains: r.contains } : {}),
      });
      // With neither `equals` nor `contains` the rule denies presence, which normalising never changes: no needle.
      const reads = r.contains === undefined ? { param: r.param, needles: [] } : { param: r.param, needles: [r.contains], decisive: r.contains };
      engine.register(r.equals === undefined ? alsoOnNormalisedCall(rule, reads) : rule);
    }
    for (const r of this.allow_tool_param) engine.register(allowToolParamRule(r.tool, r.param, r.allow));
    for (const r of this.deny_tool_param_matching) {
      const rule = denyToolParamMatchingRule(r.tool, r.param, r.matches, r.negate);
      const literal = literalPrefilter(r.matches)?.literal;
      engine.register(r.negate ? rule : alsoOnNormalisedCall(rule, { param: r.param, ...(literal !== undefined ? { needles: [literal] } : {}) }));
    }
    for (const r of this.rate_limit_tool) {
      engine.register(rateLimitToolRule(r.tool, r.max_calls, r.interval_secs, options.clock));
    }
    for (const r of this.deny_command) engine.register(denyCommandRule(r));
    if (options.traceGate !== undefined) for (const r of this.trace_rule) options.traceGate.register(r);
  }
}

/** `target.push(...more)` without spreading: a spread of a very long list overflows the call stack. */
function appendAll<T>(target: T[], more: readonly T[]): void {
  for (const item of more) target.push(item);
}

/** The stricter of two `unproven` settings: `deny`, then `ask`, then `allow`. */
function strictest(a: UnprovenAnswer | undefined, b: UnprovenAnswer): UnprovenAnswer {
  const rank: Record<UnprovenAnswer, number> = { deny: 0, ask: 1, allow: 2 };
  return a === undefined || rank[b] < rank[a] ? b : a;
}
