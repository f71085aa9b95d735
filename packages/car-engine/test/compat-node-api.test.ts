/**
 * node-api.md's call forms that broke: `eventQuery`'s `{count, events}` and
 * camelCase filters, `registerToolSchema` with `"returns": null`,
 * `submitProposal` without a handler, an un-awaited
 * `registerPolicy(…, 'deny_tool_callback')` — and, as properties, that
 * every entry point answers bad arguments with a CarError, never a crash.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isCarError } from "@car/ir";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { runSwarm as runSwarmOn } from "../src/multi/index.ts";
import { MAX_REPLAN_DELAY_MS, MAX_REPLANS } from "../src/planner/replan.ts";
import {
  CarRuntime,
  equivalent,
  executeProposal,
  HostClient,
  optimize,
  clientVersion,
  permissionClassify,
  rankProposals,
  registerAgentRunner,
  registerToolCancelHandler,
  registerToolHandler,
  runMapReduce,
  runPipeline,
  runSubtask,
  runSupervisor,
  runSwarm,
  runTournament,
  runVote,
  simulate,
  simulateMonteCarlo,
  unregisterToolCancelHandler,
  unregisterToolHandler,
  verify,
} from "../src/compat/index.ts";

afterEach(() => {
  unregisterToolHandler();
  unregisterToolCancelHandler();
});

const echoHandler = async (callJson: string) => JSON.stringify({ echoed: JSON.parse(callJson).params });

/** Two proposals, one denied by a policy: events of several kinds, actions and proposals to filter on. */
async function runtimeWithHistory(): Promise<CarRuntime> {
  const rt = new CarRuntime();
  await rt.registerTool("echo");
  await rt.registerPolicy("no_rm", "deny_tool_param", "echo", "msg", "rm -rf");
  registerToolHandler(echoHandler);
  await rt.submitProposal(JSON.stringify({ id: "p-ok", actions: [{ id: "ok", type: "tool_call", tool: "echo", parameters: { msg: "hi" } }] }));
  await rt.submitProposal(JSON.stringify({ id: "p-bad", actions: [{ id: "bad", type: "tool_call", tool: "echo", parameters: { msg: "rm -rf /" } }] }));
  return rt;
}

interface Answer {
  count: number;
  events: { seq: number; kind: string; action_id: string | null; proposal_id: string | null; timestamp: string; data: Record<string, unknown> }[];
}

async function query(rt: CarRuntime, q: object): Promise<Answer> {
  return JSON.parse(await rt.eventQuery(JSON.stringify(q))) as Answer;
}

describe("eventQuery", () => {
  it("answers {count, events}, most recent first", async () => {
    const rt = await runtimeWithHistory();
    const all = await query(rt, {});
    expect(Object.keys(all).sort()).toEqual(["count", "events"]);
    expect(all.count).toBe(all.events.length);
    expect(all.count).toBe(await rt.eventCount());
    const seqs = all.events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
  });

  it("honours every documented camelCase filter", async () => {
    const rt = await runtimeWithHistory();
    const all = (await query(rt, {})).events;
    const byAction = await query(rt, { actionId: "bad" });
    expect(byAction.count).toBeGreaterThan(0);
    expect(byAction.count).toBeLessThan(all.length);
    expect(byAction.events.every((e) => e.action_id === "bad")).toBe(true);

    const byProposal = await query(rt, { proposalId: "p-ok" });
    expect(byProposal.count).toBeGreaterThan(0);
    expect(byProposal.events.every((e) => e.proposal_id === "p-ok")).toBe(true);
    expect(byProposal.count).toBe(all.filter((e) => e.proposal_id === "p-ok").length);

    const kinds = await query(rt, { kinds: ["policy_violation", "action_succeeded"] });
    expect(kinds.events.map((e) => e.kind).sort()).toEqual(["action_succeeded", "policy_violation"]);

    const limited = await query(rt, { limit: 2 });
    expect(limited.events.map((e) => e.seq)).toEqual(all.slice(0, 2).map((e) => e.seq));

    const tool = all.find((e) => typeof e.data["tool"] === "string")!;
    const byData = await query(rt, { dataMatches: { tool: tool.data["tool"] } });
    expect(byData.count).toBe(all.filter((e) => e.data["tool"] === tool.data["tool"]).length);
    expect(byData.count).toBeLessThan(all.length);

    const oldest = all[all.length - 1]!;
    const after = new Date(Date.parse(oldest.timestamp) + 1).toISOString();
    const since = await query(rt, { since: after });
    expect(since.events.every((e) => Date.parse(e.timestamp) >= Date.parse(after))).toBe(true);
    const until = await query(rt, { until: after });
    expect(until.events.every((e) => Date.parse(e.timestamp) < Date.parse(after))).toBe(true);
    expect(since.count + until.count).toBe(all.length);

    const both = await query(rt, { proposalId: "p-bad", kinds: ["policy_violation"] });
    expect(both.count).toBe(1);
    expect(await query(rt, { proposalId: "p-ok", kinds: ["policy_violation"] })).toEqual({ count: 0, events: [] });
  });

  it("reads the wire's snake_case spellings too, but not both spellings of one filter", async () => {
    const rt = await runtimeWithHistory();
    expect(await query(rt, { action_id: "bad" })).toEqual(await query(rt, { actionId: "bad" }));
    await expect(rt.eventQuery(JSON.stringify({ actionId: "bad", action_id: "ok" }))).rejects.toSatisfy(
      (e) => isCarError(e, "invalid_params") && /same filter/.test((e as Error).message),
    );
  });

  it("refuses an unknown key instead of answering everything", async () => {
    const rt = await runtimeWithHistory();
    for (const q of [{ kind: "policy_violation" }, { actionID: "bad" }, { tool: "echo" }, { order: "asc" }]) {
      const error = await rt.eventQuery(JSON.stringify(q)).catch((e: unknown) => e);
      expect(isCarError(error, "invalid_params"), JSON.stringify(q)).toBe(true);
      expect((error as Error).message).toContain(`unknown key '${Object.keys(q)[0]}'`);
    }
  });

  it("refuses a filter of the wrong type", async () => {
    const rt = new CarRuntime();
    for (const q of [{ kinds: "action_failed" }, { kinds: [1] }, { limit: -1 }, { limit: 1.5 }, { since: "yesterday" }, { dataMatches: { tool: 3 } }, []]) {
      expect(isCarError(await rt.eventQuery(JSON.stringify(q)).catch((e: unknown) => e), "invalid_params"), JSON.stringify(q)).toBe(true);
    }
  });
});

describe("registerToolSchema", () => {
  // node-api.md's own example, with "..." as its description.
  const example = {
    name: "read_file",
    description: "...",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    returns: null,
    idempotent: true,
    cache_ttl_secs: 60,
    rate_limit: { max_calls: 100, interval_secs: 60 },
  };

  it("takes node-api.md's example, and verifyProposal checks parameters against it", async () => {
    const rt = new CarRuntime();
    await rt.registerToolSchema(JSON.stringify(example));
    const [listed] = JSON.parse(await rt.listTools());
    expect(listed).toEqual({ ...Object.fromEntries(Object.entries(example).filter(([k]) => k !== "returns")), source: "user_defined" });
    const call = (path: unknown) => JSON.stringify({ actions: [{ id: "r", type: "tool_call", tool: "read_file", parameters: { path } }] });
    expect(JSON.parse(await rt.verifyProposal(call("/etc/hosts"))).valid).toBe(true);
    expect(JSON.parse(await rt.verifyProposal(call(42))).valid).toBe(false);
  });

  it("assigns source user_defined; another claimed origin is refused", async () => {
    const rt = new CarRuntime();
    await rt.registerToolSchema(JSON.stringify({ name: "a", source: "user_defined" }));
    expect(() => rt.registerToolSchema(JSON.stringify({ name: "b", source: "builtin" }))).toThrow(/cannot claim "builtin"/);
    expect(JSON.parse(await rt.listTools()).map((t: { name: string }) => t.name)).toEqual(["a"]);
  });
});

describe("submitProposal without a tool handler", () => {
  it("fails up front: nothing runs, nothing is recorded", async () => {
    const rt = new CarRuntime();
    const called: string[] = [];
    rt.runtime.registerTool("echo", async () => {
      called.push("echo");
      return "x";
    });
    rt.stateSet("before", "1");
    const before = await rt.eventCount();
    const error = await rt
      .submitProposal(
        JSON.stringify({
          actions: [
            { id: "w", type: "state_write", key: "k", value: 1 },
            { id: "e", type: "tool_call", tool: "echo", dependencies: ["w"] },
          ],
        }),
      )
      .catch((e: unknown) => e);
    expect(isCarError(error, "invalid_params")).toBe(true);
    expect((error as Error).message).toContain("registerToolHandler");
    expect(called).toEqual([]);
    expect(rt.stateKeys()).toEqual(["before"]);
    expect(await rt.eventCount()).toBe(before);
  });
});

describe("registerToolCancelHandler", () => {
  const slow = (timeout_ms: number) => JSON.stringify({ actions: [{ id: "s", type: "tool_call", tool: "slow", timeout_ms }] });

  it("is told the request_id of a call the engine gives up on, and not of one that finished", async () => {
    const rt = new CarRuntime();
    await rt.registerTool("slow");
    const started: string[] = [];
    const cancelled: string[] = [];
    registerToolCancelHandler((requestId) => cancelled.push(requestId));
    registerToolHandler(async (callJson) => {
      started.push(JSON.parse(callJson).request_id);
      await new Promise((resolve) => setTimeout(resolve, 300));
      return "{}";
    });
    const timedOut = JSON.parse(await rt.submitProposal(slow(20)));
    expect(timedOut.results[0].status).toBe("failed");
    expect(started).toHaveLength(1);
    expect(cancelled).toEqual(started);
    expect(started[0]).toMatch(/\S/);

    const finished = JSON.parse(await rt.submitProposal(slow(5_000)));
    expect(finished.results[0].status).toBe("succeeded");
    expect(cancelled).toHaveLength(1);

    // executeProposal's per-call callback reports too; after unregistering, nothing is told.
    await executeProposal(rt, slow(20), async () => new Promise((resolve) => setTimeout(() => resolve("{}"), 300)));
    expect(cancelled).toHaveLength(2);
    unregisterToolCancelHandler();
    await rt.submitProposal(slow(20));
    expect(cancelled).toHaveLength(2);
    expect(() => registerToolCancelHandler("nope" as never)).toThrow(/registerToolCancelHandler takes a function/);
  });
});

describe("metricsAlerts, eventCostByAgent, setReplanConfig, clientVersion, rankProposals, permissionClassify", () => {
  it("eventCostByAgent answers node-api.md's camelCase rows for the runs in this runtime's log", async () => {
    const rt = new CarRuntime();
    const spec = (name: string) => ({ name, system_prompt: name, tools: [], max_turns: 1, metadata: {} });
    const agent = async ({ name }: { name: string }) =>
      JSON.stringify({ name, answer: "x", turns: 1, tool_calls: 0, duration_ms: 1, error: null, tokens: { input_tokens: 7, output_tokens: 3 } });
    await runSwarmOn("parallel", [spec("a"), spec("b")], "t", agent, { runtime: rt.runtime });
    expect(JSON.parse(await rt.eventCostByAgent())).toEqual([
      { agent: "a", calls: 1, tokensIn: 7, tokensOut: 3, costUsd: 0 },
      { agent: "b", calls: 1, tokensIn: 7, tokensOut: 3, costUsd: 0 },
    ]);
  });

  it("setReplanConfig accepts replanning off, refuses replanning naming why and where it runs, and reads arguments as replan.set_config does", async () => {
    const rt = new CarRuntime();
    registerToolHandler(async () => {
      throw new Error("flaky");
    });
    await rt.registerTool("flaky");
    await rt.setReplanConfig(0);
    await rt.setReplanConfig(0, 100, false);
    await rt.setReplanConfig(0, MAX_REPLAN_DELAY_MS, null);
    // Valid settings for replan.set_config, refused here with the reason: no proposer in the Node API.
    for (const args of [[1], [MAX_REPLANS, 5, true], [0, null, true]] as [number, (number | null)?, boolean?][]) {
      const error = (() => {
        try {
          void rt.setReplanConfig(...args);
        } catch (e) {
          return e;
        }
      })();
      expect(isCarError(error, "invalid_params")).toBe(true);
      expect((error as Error).message).toMatch(/refused: replanning asks a proposer .* registerDaemonHandler\('planner\.propose'/);
    }
    // Out of the loop's ranges: the same rule as the server, in this call's argument names.
    expect(() => rt.setReplanConfig(MAX_REPLANS + 1)).toThrow(`setReplanConfig: maxReplans must be an integer from 0 to ${MAX_REPLANS}`);
    expect(() => rt.setReplanConfig(0, -1)).toThrow(/delayMs must be an integer/);
    expect(() => rt.setReplanConfig(0, MAX_REPLAN_DELAY_MS + 1)).toThrow(/delayMs must be an integer/);
    expect(() => rt.setReplanConfig(0, 1.5)).toThrow(/delayMs must be an integer/);
    expect(() => rt.setReplanConfig(0, null, "yes" as never)).toThrow(/replanOnRejected must be a boolean/);
    expect(() => rt.setReplanConfig(null as never)).toThrow(/maxReplans is required/);
    // Nothing was set: a failing run is not replanned, it fails.
    const result = JSON.parse(
      await rt.submitProposal(JSON.stringify({ id: "once", actions: [{ id: "f", type: "tool_call", tool: "flaky", parameters: {} }] })),
    );
    expect(result.proposal_id).toBe("once");
    expect(result.results[0].status).toBe("failed");
  });

  it("metricsAlerts answers { summary, alerts } and refuses a threshold it cannot enforce", async () => {
    const rt = await runtimeWithHistory();
    const quiet = JSON.parse(await rt.metricsAlerts());
    expect(quiet).toEqual({ summary: JSON.parse(await rt.metricsSummary()), alerts: [] });
    const tripped = JSON.parse(await rt.metricsAlerts(JSON.stringify({ max_error_rate: 0.1, min_actions: 1 })));
    expect(tripped.alerts.map((a: { kind: string }) => a.kind)).toEqual(["error_rate"]);
    for (const bad of [{ max_goals_ungrounded: 1 }, { maxErrorRate: 0.1 }, { max_error_rate: 2 }, { min_actions: 0.5 }]) {
      expect(isCarError(await rt.metricsAlerts(JSON.stringify(bad)).catch((e: unknown) => e), "invalid_params"), JSON.stringify(bad)).toBe(true);
    }
  });

  it("clientVersion is this package's version", async () => {
    const { version } = (await import("../package.json", { with: { type: "json" } })).default as { version: string };
    expect(clientVersion()).toBe(version);
  });

  it("rankProposals ranks valid candidates first and keeps a broken one with its error", () => {
    const valid = { id: "ok", actions: [{ id: "a", type: "tool_call", tool: "t" }] };
    const unknownTool = { id: "unknown", actions: [{ id: "a", type: "tool_call", tool: "nope" }] };
    const ranked = JSON.parse(rankProposals(JSON.stringify([{ actions: "x" }, unknownTool, valid]), ["t"], 0.5));
    expect(ranked.map((r: { index: number }) => r.index)).toEqual([2, 1, 0]);
    expect(ranked[0]).toMatchObject({ proposal: { id: "ok" }, score: { valid: true, target: { cost_weight: 0.5 } } });
    expect(ranked[1].score.valid).toBe(false);
    expect(ranked[2].error.code).toBe("invalid_proposal");
    expect(() => rankProposals("[]", null, 2)).toThrow(/costWeight must be a number from 0 to 1/);
  });

  it("permissionClassify answers node-api.md's row shape", () => {
    const rows = JSON.parse(
      permissionClassify(
        JSON.stringify({
          actions: [
            { id: "r", type: "tool_call", tool: "read_file", parameters: { path: "a" } },
            { id: "x", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /" } },
          ],
        }),
      ),
    );
    expect(rows).toEqual([
      { action_id: "r", tool: "read_file", required_tier: "read_only", reversibility: "reversible", missing_compensation: false },
      { action_id: "x", tool: "shell", required_tier: "full_access", reversibility: "irreversible", missing_compensation: false },
    ]);
  });
});

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

describe("registerPolicy('…', 'deny_tool_callback') without a function", () => {
  it("throws a CarError at the call, so plain Node without await does not die of an unhandled rejection", () => {
    const compat = pathToFileURL(fileURLToPath(new URL("../src/compat/index.ts", import.meta.url))).href;
    const script = [
      `const { CarRuntime } = await import(${JSON.stringify(compat)});`,
      "const rt = new CarRuntime();",
      "let caught;",
      "try { rt.registerPolicy('audit_payment', 'deny_tool_callback', 'payment'); } catch (e) { caught = e; }",
      "rt.registerPolicy('no_shell', 'deny_tool', 'shell');", // an un-awaited good call beside it
      "await new Promise((r) => setTimeout(r, 50));",
      "console.log(JSON.stringify({ name: caught?.name, code: caught?.code, policies: JSON.parse(await rt.listPolicies()).map((p) => p.name) }));",
    ].join("\n");
    const r = spawnSync(process.execPath, ["--import", TSX, "--conditions=source", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ name: "CarError", code: "invalid_params", policies: ["no_shell"] });
  });
});

// --- properties: bad arguments are a CarError, never a crash ----------------

/** Calls `f`; a thrown or rejected error must be a CarError (anything else fails the property). */
async function onlyCarErrors(f: () => unknown): Promise<void> {
  let outcome: unknown;
  try {
    outcome = f();
  } catch (error) {
    if (!isCarError(error)) throw error;
    return;
  }
  if (outcome instanceof Promise) {
    await outcome.catch((error: unknown) => {
      if (!isCarError(error)) throw error;
    });
  }
}

/** What a JavaScript caller may pass: anything, JSON text of anything, and near-misses of the right shapes. */
const argument = fc.oneof(
  fc.anything(),
  fc.json(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.constantFrom("{", "null", "[]", "{}", '{"actions":[{}]}', '{"actions":[{"type":"tool_call"}]}', "deny_tool_callback", "deny_tool"),
);

const RUNTIME_METHODS = [
  "registerTool",
  "registerToolSchema",
  "unregisterTool",
  "registerPolicy",
  "unregisterPolicy",
  "stateSet",
  "stateGet",
  "stateExists",
  "stateSnapshot",
  "stateKeys",
  "verifyProposal",
  "submitProposal",
  "toolPoll",
  "toolCancel",
  "eventQuery",
  "metricsAlerts",
  "setReplanConfig",
  "ingestSkill",
  "findSkill",
  "reportOutcome",
  "distillSkills",
  "ingestDistilledSkills",
  "listSkills",
  "domainsNeedingEvolution",
  "evolveSkills",
  "repairSkill",
  "ingestProvisionalSkills",
  "skillMeta",
  "exportSkill",
  "importSkill",
] as const;

function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const FUNCTIONS: Record<string, (...args: never[]) => unknown> = {
  executeProposal,
  verify,
  simulate,
  simulateMonteCarlo,
  optimize,
  equivalent,
  rankProposals,
  permissionClassify,
  runPipeline,
  runSwarm,
  runSupervisor,
  runMapReduce,
  runVote,
  runTournament,
  runSubtask,
};

describe("entry points under arbitrary arguments (fast-check)", () => {
  it("the daemon surface checks its arguments before connecting", async () => {
    // Port 9 (discard) has no car serve: an argument that got as far as connecting would fail with ECONNREFUSED instead.
    const rt = new CarRuntime({ daemonUrl: "ws://127.0.0.1:9" });
    await fc.assert(
      fc.asyncProperty(argument, argument, async (method, params) => {
        fc.pre(!(typeof method === "string" && typeof params === "string" && isValidJson(params)));
        const error = await Promise.resolve()
          .then(() => rt.daemonCall(method as string, params as string))
          .catch((e: unknown) => e);
        expect(isCarError(error, "invalid_params")).toBe(true);
      }),
      { numRuns: 300 },
    );
    expect(() => rt.registerDaemonHandler("tools.execute", "nope" as never)).toThrow(/handler must be a function/);
    expect(() => rt.registerDaemonNotificationHandler(7 as never, () => {})).toThrow(/method name must be a string/);
    expect(() => new HostClient({} as never)).toThrow(/HostClient takes a CarRuntime/);
    // Well-formed, it connects — and a failed connection names where it went.
    await expect(rt.daemonCall("state.keys", "{}")).rejects.toThrow(/^cannot reach the CAR daemon at ws:\/\/127\.0\.0\.1:9 \(CAR_DAEMON_URL\): /);
    await rt.close();
  });

  it("every CarRuntime method answers bad arguments with a CarError", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...RUNTIME_METHODS), fc.array(argument, { maxLength: 8 }), fc.boolean(), async (method, args, withHandler) => {
        const rt = new CarRuntime();
        if (withHandler) registerToolHandler(echoHandler);
        else unregisterToolHandler();
        await onlyCarErrors(() => (rt[method] as (...a: unknown[]) => unknown)(...args));
      }),
      { numRuns: 600 },
    );
  });

  it("eventQuery: any JSON object either answers {count, events} with only documented keys given, or is invalid_params", async () => {
    const rt = await runtimeWithHistory();
    const documented = new Set(["kinds", "actionId", "proposalId", "since", "until", "dataMatches", "limit", "action_id", "proposal_id", "data_matches"]);
    const key = fc.oneof(fc.constantFrom(...documented), fc.string({ maxLength: 12 }));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(key, fc.jsonValue(), { maxKeys: 4 }), async (q) => {
        let answer: Answer;
        try {
          answer = JSON.parse(await rt.eventQuery(JSON.stringify(q))) as Answer;
        } catch (error) {
          expect(isCarError(error, "invalid_params")).toBe(true);
          return;
        }
        expect(Object.keys(q).every((k) => documented.has(k))).toBe(true);
        expect(answer.count).toBe(answer.events.length);
      }),
      { numRuns: 400 },
    );
  });

  it("every standalone function answers bad arguments with a CarError", async () => {
    await registerAgentRunner(async (specJson) => {
      const name = (JSON.parse(specJson) as { name?: unknown }).name;
      return JSON.stringify({ name, answer: "ok", turns: 1, tool_calls: 0, duration_ms: 1, error: null });
    });
    const rt = new CarRuntime();
    await rt.registerTool("echo");
    const first = fc.oneof(argument, fc.constant(rt));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(FUNCTIONS)), first, fc.array(argument, { maxLength: 6 }), async (name, head, rest) => {
        registerToolHandler(echoHandler);
        await onlyCarErrors(() => (FUNCTIONS[name] as (...a: unknown[]) => unknown)(head, ...rest));
      }),
      { numRuns: 600 },
    );
  });
});

describe("docs/node-api.md", () => {
  it("names every member @car/engine/compat offers, so the coverage table cannot fall behind the code", async () => {
    const doc = readFileSync(new URL("../docs/node-api.md", import.meta.url), "utf8");
    const compat = await import("../src/compat/index.ts");
    const methods = Object.getOwnPropertyNames(CarRuntime.prototype).filter((m) => m !== "constructor");
    const exported = Object.keys(compat).filter((name) => name !== "discoverToken"); // discoverToken: this package's own helper, not node-api.md's
    const missing = [...methods, ...exported].filter((name) => !doc.includes(`\`${name}`));
    expect(missing).toEqual([]);
  });
});
