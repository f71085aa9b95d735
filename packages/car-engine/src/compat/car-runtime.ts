/**
 * `CarRuntime` with the original Node binding's method names and JSON-string
 * conventions, over this package's `Runtime` and skill store, so code written
 * for the original runs with its import line changed. Only the surface inside
 * this project's scope is offered (tools, policies, state, verify / submit,
 * events, detached tools, skills); see the package README for what is not.
 * Methods that were async in the original stay async here.
 */
import { CarError, type JsonValue } from "@car/ir";
import { metricsAlerts } from "../events/alerts.ts";
import { costByAgent, type MetricsSummary, metricsSummary } from "../events/metrics.ts";
import { storeCutCostUsd } from "../durable/checkpoint.ts";
import { alertThresholdsArg } from "./alert-thresholds.ts";
import { parseReplanConfig, type ReplanConfig } from "../planner/replan.ts";
import { Runtime, type RuntimeOptions } from "../runtime.ts";
import { distillSkills } from "../skills/distill.ts";
import { findSkill } from "../skills/find.ts";
import { InMemorySkillStore } from "../skills/in-memory-skill-store.ts";
import { evolveSkills, repairSkill, type SkillEvolver, type SkillRepairer } from "../skills/improve.ts";
import { ingestDistilledSkills } from "../skills/ingest.ts";
import { traceEventsFrom } from "../skills/runtime-trace.ts";
import { ingestProvisionalSkills, runPromotionGate, skillMeta } from "../skills/lifecycle.ts";
import { exportSkill, importSkill } from "../skills/portable.ts";
import { domainsNeedingEvolution, reportOutcome } from "../skills/outcomes.ts";
import type { SkillOptions } from "../skills/record-version.ts";
import type { SkillStore } from "../skills/skill-store.ts";
import type { DistilledSkillInput } from "../skills/types.ts";
import { currentToolHandler } from "./tool-handler.ts";
import { DaemonLink, type DaemonOptions } from "./daemon.ts";
import { eventQueryArg } from "./event-query.ts";
import { jsonArg, jsonResult, optionalNumberArg, optionalStringArg, proposalArg, stringArg, stringListArg } from "./json-args.ts";
import { toolSchemaArg } from "./tool-schema-arg.ts";

export interface CarRuntimeOptions extends RuntimeOptions, DaemonOptions {
  /** Where skills live; in memory unless given (e.g. a `JsonFileSkillStore`). */
  skills?: SkillStore;
  /**
   * What `evolveSkills` asks for better skills (the original used its
   * inference engine); without one, the domain is re-distilled from the trace.
   */
  evolver?: SkillEvolver;
  /**
   * What `repairSkill` asks for a repaired skill; without one, a degraded
   * skill adopts the code of a sequence that keeps succeeding in its domain
   * in this runtime's own events, or stays as it is (null).
   */
  repairer?: SkillRepairer;
}

/** Why the in-process runtime cannot replan, and where it can be done instead. */
const NO_PROPOSER =
  "replanning asks a proposer for each replacement plan, and the in-process runtime has none (node-api.md offers no plan callback); " +
  "replan on car serve instead: daemonCall('replan.set_config', …) with registerDaemonHandler('planner.propose', …) answering the replacement";

const CAMEL_ARGUMENTS: Record<string, string> = { max_replans: "maxReplans", delay_ms: "delayMs", replan_on_rejected: "replanOnRejected" };

function noTenant(tenant: string | undefined): void {
  if (tenant !== undefined) throw new CarError("invalid_params", "tenant-scoped state is not offered by this runtime");
}

export class CarRuntime {
  /** The runtime underneath, for code that moves to the idiomatic API piece by piece. */
  readonly runtime: Runtime;
  readonly skills: SkillStore;
  readonly #options: CarRuntimeOptions;
  readonly #descriptions = new Map<string, string>();
  readonly #daemon: DaemonLink;

  constructor(options: CarRuntimeOptions = {}) {
    this.#options = options;
    this.#daemon = new DaemonLink(options);
    this.runtime = new Runtime(options);
    this.skills = options.skills ?? new InMemorySkillStore();
  }

  /** Closes the runtime and the daemon connection (a later daemon call reconnects). */
  async close(): Promise<void> {
    await this.#daemon.close();
    await this.runtime.close();
  }

  async disconnect(): Promise<void> {
    await this.close();
  }

  // --- the daemon (`car serve`) ---------------------------------------------

  /** Calls any method of the daemon by name, params and result as JSON text; an error answer is a `DaemonRpcError`. */
  daemonCall(method: string, paramsJson: string): Promise<string> {
    return this.#daemon.call(method, paramsJson);
  }

  /** The original's host-token twin of `daemonCall`: on `car serve` the same connection, whose operator role the server enforces. */
  daemonCallHostManagement(method: string, paramsJson: string): Promise<string> {
    return this.#daemon.call(method, paramsJson);
  }

  /** Answers the daemon's requests for `method` (e.g. `tools.execute`) with the handler's JSON. */
  registerDaemonHandler(method: string, handler: (paramsJson: string) => Promise<string>): void {
    this.#daemon.onRequest(method, handler);
  }

  registerDaemonNotificationHandler(method: string, handler: (paramsJson: string) => void): void {
    this.#daemon.onNotification(method, handler);
  }

  /** `server.schema`: the daemon's wire schema and its digest, as JSON. */
  serverSchema(): Promise<string> {
    return this.#daemon.call("server.schema", "{}");
  }

  // --- tools & policies ---------------------------------------------------
  //
  // The registration methods return promises, as the original's did, but
  // check their arguments before returning one: code that calls them without
  // `await` (cookbook 08 does) gets the CarError thrown at the call, not an
  // unhandled rejection that ends the process.

  registerTool(name: string): Promise<void> {
    if (typeof name !== "string") throw new CarError("invalid_params", "registerTool takes a tool name (a string); use registerToolSchema for a schema");
    this.runtime.registerTool(name);
    return Promise.resolve();
  }

  /** `schemaJson`: a ToolSchema as JSON; `"returns": null` declares no result schema, `source` is always `user_defined`. */
  registerToolSchema(schemaJson: string): Promise<void> {
    this.runtime.registerTool(toolSchemaArg(schemaJson));
    return Promise.resolve();
  }

  async listTools(): Promise<string> {
    return jsonResult(this.runtime.listTools());
  }

  unregisterTool(name: string): Promise<number> {
    if (typeof name !== "string") throw new CarError("invalid_params", "unregisterTool takes a tool name (a string)");
    return Promise.resolve(this.runtime.unregisterTool(name));
  }

  /**
   * The positional form `(name, rule, target?, key?, pattern?, valueJson?)`.
   * `deny_tool_callback` needs a function, which this form cannot carry: it
   * is refused here; register `{ name, rule: "callback", callback }` on
   * `.runtime` instead.
   */
  registerPolicy(
    name: string,
    rule: string,
    target?: string | null,
    key?: string | null,
    pattern?: string | null,
    valueJson?: string | null,
    sessionId?: string | null,
  ): Promise<void> {
    if (sessionId !== undefined && sessionId !== null)
      throw new CarError("invalid_params", "session-scoped policies are not offered; register the policy globally");
    if (rule === "deny_tool_callback")
      throw new CarError(
        "invalid_params",
        `policy '${String(name)}' (deny_tool_callback) needs a JavaScript function, which registerPolicy's positional form cannot carry: ` +
          "register { name, rule: 'callback', callback: (action, state) => reason | undefined } with rt.runtime.registerPolicy",
      );
    this.runtime.registerPolicy(name, rule, target, key, pattern, valueJson);
    this.#descriptions.set(name, [rule, target, key, pattern].filter((p) => typeof p === "string" && p !== "").join(" "));
    return Promise.resolve();
  }

  unregisterPolicy(name: string): Promise<number> {
    if (typeof name !== "string") throw new CarError("invalid_params", "unregisterPolicy takes a policy name (a string)");
    this.#descriptions.delete(name);
    return Promise.resolve(this.runtime.unregisterPolicy(name));
  }

  async listPolicies(): Promise<string> {
    return jsonResult(this.runtime.policies.names().map((name) => ({ name, description: this.#descriptions.get(name) ?? "" })));
  }

  /**
   * The replan loop (`@car/engine/planner`'s `executeWithReplan`) asks a
   * proposer for each replacement plan, and node-api.md gives the in-process
   * runtime none: no callback of the binding answers a plan (the tool handler
   * answers tool calls, the agent runner `AgentOutput`s). So the arguments
   * are read as `replan.set_config` reads them (`parseReplanConfig`: same
   * ranges, same errors) and any setting that would replan is refused,
   * naming where replanning does run: `car serve`, whose `planner.propose`
   * request a `registerDaemonHandler` callback answers. `0`, the original's
   * default, is what happens here and is accepted.
   */
  setReplanConfig(maxReplans: number, delayMs?: number | null, replanOnRejected?: boolean | null): Promise<void> {
    let config: ReplanConfig;
    try {
      config = parseReplanConfig({
        max_replans: maxReplans,
        ...(delayMs === undefined || delayMs === null ? {} : { delay_ms: delayMs }),
        ...(replanOnRejected === undefined || replanOnRejected === null ? {} : { replan_on_rejected: replanOnRejected }),
      });
    } catch (error) {
      // The same rule, told in this call's argument names.
      const message = (error as Error).message.replace(/max_replans|delay_ms|replan_on_rejected/g, (name) => CAMEL_ARGUMENTS[name]!);
      throw new CarError("invalid_params", `setReplanConfig: ${message}`);
    }
    if (config.max_replans !== 0 || config.replan_on_rejected) {
      const setting = config.max_replans !== 0 ? `maxReplans ${config.max_replans}` : "replanOnRejected true";
      throw new CarError("invalid_params", `setReplanConfig: ${setting} is refused: ${NO_PROPOSER}`);
    }
    return Promise.resolve();
  }

  // --- state --------------------------------------------------------------

  stateSet(key: string, valueJson: string, tenant?: string): void {
    noTenant(tenant);
    this.runtime.state.set(stringArg(key, "key"), jsonArg(valueJson, "valueJson") as JsonValue);
  }

  stateGet(key: string, tenant?: string): string {
    noTenant(tenant);
    return jsonResult(this.runtime.state.get(stringArg(key, "key")));
  }

  stateExists(key: string, tenant?: string): boolean {
    noTenant(tenant);
    return this.runtime.state.exists(stringArg(key, "key"));
  }

  stateSnapshot(tenant?: string): string {
    noTenant(tenant);
    return jsonResult(this.runtime.state.snapshot());
  }

  stateKeys(tenant?: string): string[] {
    noTenant(tenant);
    return this.runtime.state.keys();
  }

  // --- verify and execute -------------------------------------------------

  async verifyProposal(proposalJson: string): Promise<string> {
    return jsonResult(this.runtime.verifyProposal(proposalArg(proposalJson, "proposalJson")));
  }

  /**
   * Runs a proposal through the tool handler set with `registerToolHandler`.
   * Without one it fails up front, as the original does: nothing runs and
   * nothing is recorded.
   */
  async submitProposal(proposalJson: string, sessionId?: string | null): Promise<string> {
    const handler = currentToolHandler();
    if (handler === undefined) throw new CarError("invalid_params", "submitProposal needs a tool handler: call registerToolHandler(handlerFn) first");
    const session = optionalStringArg(sessionId, "sessionId");
    const result = await this.runtime.executeProposal(proposalArg(proposalJson, "proposalJson"), handler, { session_id: session });
    return jsonResult(result);
  }

  // --- detached tools -----------------------------------------------------

  async toolPoll(handle: string): Promise<string | null> {
    const result = this.runtime.toolPoll(stringArg(handle, "handle"));
    return result === null ? null : jsonResult(result);
  }

  async toolCancel(handle: string): Promise<boolean> {
    return this.runtime.toolCancel(stringArg(handle, "handle"));
  }

  // --- events -------------------------------------------------------------

  async eventCount(): Promise<number> {
    return this.runtime.events.count();
  }

  /**
   * `queryJson`: `{ kinds?, actionId?, proposalId?, since?, until?, dataMatches?, limit? }`
   * (see event-query.ts); answers `{ count, events }`, most recent first.
   */
  async eventQuery(queryJson: string): Promise<string> {
    const events = this.runtime.events.query(eventQueryArg(queryJson));
    return jsonResult({ count: events.length, events });
  }

  /**
   * `[{ agent, calls, tokensIn, tokensOut, costUsd }]` — camelCase, as
   * node-api.md gives it — folded from the multi-agent runs in this
   * runtime's log (runs started with `{ runtime: rt.runtime }`).
   */
  async eventCostByAgent(): Promise<string> {
    const rows = costByAgent(this.runtime.events.query()).map((r) => ({
      agent: r.agent,
      calls: r.calls,
      tokensIn: r.tokens_in,
      tokensOut: r.tokens_out,
      costUsd: r.cost_usd,
    }));
    return jsonResult(rows);
  }

  async metricsSummary(): Promise<string> {
    return jsonResult(await this.#summary());
  }

  /** The log's roll-up, its cumulative spend carried across a durable store's cuts. */
  async #summary(): Promise<MetricsSummary> {
    return metricsSummary(this.runtime.events.query(), await storeCutCostUsd(this.runtime.store));
  }

  /** `thresholdsJson`: `{ max_cost_usd?, max_error_rate?, max_avg_latency_ms?, min_actions? }` (omit for none); answers `{ summary, alerts }`. */
  async metricsAlerts(thresholdsJson?: string): Promise<string> {
    const thresholds = thresholdsJson === undefined ? {} : alertThresholdsArg(thresholdsJson);
    const summary = await this.#summary();
    return jsonResult({ summary, alerts: metricsAlerts(summary, thresholds) });
  }

  // --- skills -------------------------------------------------------------

  async ingestSkill(
    name: string,
    code: string,
    platform: string,
    persona: string,
    urlPattern: string,
    taskKeywords: string[],
    description: string,
    supersedesSkill?: string | null,
  ): Promise<number> {
    const skill: DistilledSkillInput = {
      name: stringArg(name, "name"),
      code: stringArg(code, "code"),
      description: stringArg(description, "description"),
      domain: stringArg(platform, "platform"),
      trigger: {
        persona: stringArg(persona, "persona"),
        url_pattern: stringArg(urlPattern, "urlPattern"),
        task_keywords: stringListArg(taskKeywords, "taskKeywords"),
      },
      source: "manual",
    };
    const supersedes = optionalStringArg(supersedesSkill, "supersedesSkill");
    if (supersedes !== null && supersedes !== name)
      throw new CarError("invalid_params", "supersedesSkill must name the skill itself: a new version keeps its name");
    return ingestDistilledSkills(this.skills, [skill], this.#skillOptions());
  }

  /** The best matches, best first, as JSON; `"null"` when nothing matches (node-api.md). */
  findSkill(persona: string, url: string, task: string, maxResults?: number | null): string {
    const context = { persona: stringArg(persona, "persona"), url: stringArg(url, "url"), task: stringArg(task, "task") };
    const max = optionalNumberArg(maxResults, "maxResults", (n) => Number.isSafeInteger(n) && n > 0, "a positive integer");
    const matches = findSkill(this.skills, context, max ?? 1);
    return matches.length === 0 ? "null" : jsonResult(matches);
  }

  reportOutcome(skillName: string, outcome: string): string {
    return jsonResult(reportOutcome(this.skills, stringArg(skillName, "skillName"), stringArg(outcome, "outcome") as "success", this.#skillOptions()));
  }

  async distillSkills(eventsJson: string): Promise<string> {
    return jsonResult(distillSkills(jsonArg(eventsJson, "eventsJson") as unknown[]));
  }

  ingestDistilledSkills(skillsJson: string): number {
    return ingestDistilledSkills(this.skills, jsonArg(skillsJson, "skillsJson") as DistilledSkillInput[], this.#skillOptions());
  }

  listSkills(domain?: string | null): string {
    const only = optionalStringArg(domain, "domain");
    const all = this.skills.list();
    return jsonResult(only === null ? all : all.filter((s) => s.domain === only));
  }

  domainsNeedingEvolution(threshold?: number | null): string[] {
    const below = optionalNumberArg(threshold, "threshold", (n) => n >= 0 && n <= 1, "a number from 0 to 1");
    return below === null ? domainsNeedingEvolution(this.skills) : domainsNeedingEvolution(this.skills, below);
  }

  async evolveSkills(eventsJson: string, domain: string): Promise<string> {
    const events = jsonArg(eventsJson, "eventsJson") as unknown[];
    return jsonResult(await evolveSkills(this.skills, stringArg(domain, "domain"), this.#options.evolver, { ...this.#skillOptions(), events }));
  }

  async repairSkill(skillName: string): Promise<string | null> {
    const skill = this.skills.get(stringArg(skillName, "skillName"));
    const events = skill === undefined ? [] : traceEventsFrom(this.runtime.events.query(), skill.domain);
    const repaired = await repairSkill(this.skills, skillName, this.#options.repairer, { ...this.#skillOptions(), events });
    // node-api.md: "Returns repaired code or null" (the new version is recorded too).
    return repaired === null ? null : repaired.code;
  }

  /** Candidates on trial as `<name>@cand`; returns how many entered. Skills here are not tenant-scoped: a `tenant` is refused. */
  ingestProvisionalSkills(skillsJson: string, tenant?: string | null): number {
    if (tenant !== undefined && tenant !== null) throw new CarError("invalid_params", "tenant: skills are not tenant-scoped in this runtime");
    return ingestProvisionalSkills(this.skills, jsonArg(skillsJson, "skillsJson") as DistilledSkillInput[], this.#skillOptions());
  }

  async gateSkillCandidates(): Promise<string> {
    return jsonResult(runPromotionGate(this.skills, this.#skillOptions()));
  }

  async skillMeta(key: string): Promise<string> {
    return jsonResult(skillMeta(this.skills, stringArg(key, "key")));
  }

  async exportSkill(key: string): Promise<string | null> {
    return exportSkill(this.skills, stringArg(key, "key"));
  }

  async importSkill(markdown: string): Promise<boolean> {
    importSkill(this.skills, stringArg(markdown, "markdown"), this.#skillOptions());
    return true;
  }

  #skillOptions(): SkillOptions {
    return { clock: this.runtime.clock };
  }
}
