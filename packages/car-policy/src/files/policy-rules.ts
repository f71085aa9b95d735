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

export class PolicyRules {
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
    this.deny_tool.push(...other.deny_tool);
    this.deny_keyword.push(...other.deny_keyword);
    this.deny_tool_param.push(...other.deny_tool_param);
    this.allow_tool_param.push(...other.allow_tool_param);
    this.deny_tool_param_matching.push(...other.deny_tool_param_matching);
    this.rate_limit_tool.push(...other.rate_limit_tool);
    this.trace_rule.push(...other.trace_rule);
    this.deny_command.push(...other.deny_command);
    this.sandbox.push(...other.sandbox);
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
      engine.register(r.equals === undefined ? alsoOnNormalisedCall(rule) : rule);
    }
    for (const r of this.allow_tool_param) engine.register(allowToolParamRule(r.tool, r.param, r.allow));
    for (const r of this.deny_tool_param_matching) {
      const rule = denyToolParamMatchingRule(r.tool, r.param, r.matches, r.negate);
      engine.register(r.negate ? rule : alsoOnNormalisedCall(rule));
    }
    for (const r of this.rate_limit_tool) {
      engine.register(rateLimitToolRule(r.tool, r.max_calls, r.interval_secs, options.clock));
    }
    for (const r of this.deny_command) engine.register(denyCommandRule(r));
    if (options.traceGate !== undefined) for (const r of this.trace_rule) options.traceGate.register(r);
  }
}
