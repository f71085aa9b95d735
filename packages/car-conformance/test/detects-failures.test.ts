/**
 * The runner must be able to fail: deliberately broken runtimes (wrapping
 * the real engine) fail exactly the scenarios that observe what they break.
 */
import { describe, expect, it } from "vitest";
import type { JsonObject, JsonValue } from "@car/ir";
import { engineAdapter, formatHuman, formatJunit, loadCapabilities, runConformance, ToolBehaviours } from "../src/index.ts";
import type { ConformanceReport, ConformanceRuntime, RuntimeFactory } from "../src/index.ts";

const METHODS = [
  "registerTools",
  "registerPolicy",
  "setState",
  "submit",
  "verify",
  "simulate",
  "equivalent",
  "optimize",
  "poll",
  "cancel",
  "getState",
  "getEvents",
  "setTier",
  "approve",
  "waitingSubmit",
  "supervisedSubmit",
] as const;

/** A factory whose runtimes are the engine's, with some methods replaced and the `omit`ted (optional) ones left out. */
function broken(patch: (rt: ConformanceRuntime) => Partial<ConformanceRuntime>, omit: readonly (typeof METHODS)[number][] = []): RuntimeFactory {
  const real = engineAdapter();
  const originals = new WeakMap<object, ConformanceRuntime>();
  return {
    name: "broken",
    features: real.features ?? [],
    createRuntime: async () => {
      const rt = await real.createRuntime();
      const delegate = Object.fromEntries(
        METHODS.filter((m) => !omit.includes(m)).map((m) => [m, (rt[m] as ((...args: unknown[]) => unknown) | undefined)?.bind(rt)]),
      ) as unknown as ConformanceRuntime;
      const wrapped: ConformanceRuntime = { ...delegate, ...patch(rt) };
      originals.set(wrapped, rt);
      return wrapped;
    },
    destroyRuntime: (rt) => real.destroyRuntime?.(originals.get(rt)!),
  };
}

function statusOf(report: ConformanceReport): Map<string, string> {
  return new Map(report.capabilities.flatMap((c) => c.scenarios.map((s) => [s.id, s.status] as const)));
}

describe("the runner detects a non-conforming runtime", () => {
  it("a runtime that accepts a tier but never gates fails the admission scenarios (DECISIONS §16)", async () => {
    const factory = broken(() => ({ setTier: async () => {} }));
    const status = statusOf(await runConformance({ ...factory, capabilities: ["approvals"] }));
    expect(status.get("approvals.third-action-above-tier-rejects-whole-proposal")).toBe("failed");
    expect(status.get("approvals.full-access-always-needs-approval")).toBe("failed");
    expect(status.get("approvals.within-tier-runs")).toBe("passed");
  });

  it("an adapter claiming approvals without setTier fails them; unclaimed, they are not checked", async () => {
    const claimed = broken(() => ({}), ["setTier", "approve"]);
    const failed = await runConformance({ ...claimed, capabilities: ["approvals"] });
    expect(statusOf(failed).get("approvals.within-tier-runs")).toBe("failed");
    const unclaimed = await runConformance({ ...claimed, features: (claimed.features ?? []).filter((f) => f !== "approvals") });
    expect(unclaimed.not_checked).toContain("approvals");
    const approvals = unclaimed.capabilities.find((c) => c.capability === "approvals")!;
    expect(approvals.scenarios.map((s) => s.status)).toEqual(approvals.scenarios.map(() => "skipped"));
    expect(unclaimed.failed).toBe(0);
    // Two whole runs, and the claimed one waits out the 20 s approval wait of the scenario that waits at dispatch.
  }, 120_000);

  it("a runtime whose supervisor is never asked (nothing parked) fails the supervision scenarios that watch a verdict", async () => {
    const factory = broken((rt) => ({
      supervisedSubmit: async (step) => ({ outcome: await rt.submit(step.proposal), intent: null, redecide_error: null }),
    }));
    const status = statusOf(await runConformance({ ...factory, capabilities: ["supervision"] }));
    expect(status.get("supervision.allow-runs-after-the-verdict")).toBe("failed");
    expect(status.get("supervision.deny-rejects-whole-proposal")).toBe("failed");
    expect(status.get("supervision.escalate-hands-to-the-ledger")).toBe("failed");
    expect(status.get("supervision.disconnect-does-not-release")).toBe("failed");
    expect(status.get("supervision.filter-narrows")).toBe("passed");
  });

  it("a runtime that ignores the declared tool behaviours fails the retry and terminal scenarios", async () => {
    const factory = broken((rt) => ({
      // Every tool just succeeds with {"ok": true}, whatever the scenario declared.
      registerTools: (tools, _behaviours) => rt.registerTools(tools, new ToolBehaviours([])),
    }));
    const report = await runConformance({ ...factory, capabilities: ["failure-behaviours", "terminal-failures", "ordering"] });
    const status = statusOf(report);
    expect(status.get("failure-behaviours.retry-then-succeed")).toBe("failed");
    expect(status.get("failure-behaviours.abort-is-default")).toBe("failed");
    expect(status.get("terminal-failures.no-retry")).toBe("failed");
    // Scenarios that do not depend on tool behaviour still pass.
    expect(status.get("ordering.cycle-refused")).toBe("passed");
    expect(status.get("ordering.state-writes-keep-declaration-order")).toBe("passed");
    expect(report.conformant).toBe(false);
    // Failures are findings about behaviour, not a broken harness.
    expect(
      report.capabilities
        .flatMap((c) => c.scenarios)
        .flatMap((s) => s.failures)
        .filter((f) => f.where === "setup"),
    ).toEqual([]);
    const failure = report.capabilities
      .find((c) => c.capability === "failure-behaviours")!
      .scenarios.find((s) => s.id === "failure-behaviours.retry-then-succeed")!;
    expect(failure.failures.some((f) => f.path.includes("cost") || f.path.includes("count"))).toBe(true);
  }, 60_000);

  it("a runtime that drops rolled_back and skips rollback fails exactly the rollback scenarios that observe them", async () => {
    const factory = broken((rt) => ({
      submit: async (proposal) => {
        const outcome = await rt.submit(proposal);
        if (!("result" in outcome)) return outcome;
        const result = outcome.result as JsonObject;
        const results = (result["results"] as JsonObject[]).map((r) => {
          const { rolled_back: _dropped, ...rest } = r;
          return rest as JsonObject;
        });
        return { result: { ...result, results } as JsonValue };
      },
    }));
    const report = await runConformance({ ...factory, capabilities: ["rollback"] });
    const status = statusOf(report);
    expect(status.get("rollback.succeeded-marked-rolled-back")).toBe("failed");
    expect(status.get("rollback.earlier-proposal-untouched")).toBe("failed");
    expect(status.get("rollback.abort-restores-state")).toBe("passed");
    expect(status.get("rollback.rolled-back-omitted-when-committed")).toBe("passed");
  }, 60_000);

  it("a runtime whose events copy parameter values fails the scenario that forbids them anywhere in an event", async () => {
    const factory = broken((rt) => ({
      getEvents: async () => (await rt.getEvents()).map((e) => ({ ...e, data: { ...(e["data"] as JsonObject), note: "saw RAW-SECRET-91ab" } })),
    }));
    const report = await runConformance({ ...factory, suite: loadCapabilities().filter((c) => c.capability === "events") });
    const status = statusOf(report);
    expect(status.get("events.no-parameter-value-anywhere")).toBe("failed");
    expect(status.get("events.succeeded-digest")).toBe("passed");
    const failure = report.capabilities[0]!.scenarios.find((s) => s.id === "events.no-parameter-value-anywhere")!.failures[0]!;
    expect(failure.message).toBe('an event carries "RAW-SECRET-91ab"');
  }, 60_000);

  it("a hung runtime fails the scenario at its deadline instead of hanging the run", async () => {
    const factory = broken(() => ({ submit: () => new Promise(() => {}) }));
    const report = await runConformance({ ...factory, capabilities: ["ordering"], scenarioFilter: ["ordering.cycle-refused"], scenarioTimeoutMs: 200 });
    expect(report.failed).toBe(1);
    expect(report.capabilities[0]!.scenarios[0]!.failures[0]!.message).toContain("did not finish in time");
  });

  it("a runtime whose sessions share state gets no false failures: each leaked scenario names the keys and the verdict is inconclusive", async () => {
    const real = engineAdapter();
    const shared = await real.createRuntime();
    const factory: RuntimeFactory = { name: "shared", features: real.features ?? [], createRuntime: () => shared };
    const report = await runConformance({ ...factory, suite: loadCapabilities().filter((c) => c.capability === "rollback") });
    await real.destroyRuntime?.(shared);
    const scenarios = report.capabilities[0]!.scenarios;
    expect(scenarios[0]!.status).toBe("passed");
    const leaked = scenarios.filter((s) => s.status === "error");
    expect(leaked.length).toBeGreaterThan(0);
    expect(scenarios.filter((s) => s.status === "failed")).toEqual([]);
    const leakedKeys = leaked[0]!.failures[0]!.actual as string[];
    expect(leakedKeys.length).toBeGreaterThan(0);
    expect(leaked[0]!.failures[0]!.message).toContain(`state not empty before scenario ${leaked[0]!.id}: keys ${leakedKeys.slice(0, 10).join(", ")}`);
    expect(report).toMatchObject({ verdict: "inconclusive", conformant: false, failed: 0 });
    expect(report.errors).toBe(leaked.length);
    expect(formatHuman(report)).toContain("INCONCLUSIVE");
    expect(formatJunit(report, "h")).toMatch(/<error message="state not empty before scenario/);
  }, 60_000);

  it("a runtime that declares an optional capability and fails it is not conformant; undeclared, it is not checked", async () => {
    const factory = broken((rt) => ({
      // Detached tools run inline: the action's output is the tool's, not a handle.
      submit: (proposal) => rt.submit(JSON.parse(JSON.stringify(proposal).replaceAll('"long_running"', '"one_shot"')) as JsonValue),
    }));
    const suite = loadCapabilities().filter((c) => c.capability === "detached-tools" || c.capability === "rollback");
    const declared = await runConformance({ ...factory, suite });
    expect(declared.verdict).toBe("not_conformant");
    expect(declared.capabilities.find((c) => c.capability === "detached-tools")!.failed).toBeGreaterThan(0);
    const undeclared = await runConformance({ ...factory, features: ["raw_output"], suite });
    expect(undeclared).toMatchObject({ verdict: "conformant", not_checked: ["detached-tools"] });
    expect(undeclared.capabilities.find((c) => c.capability === "detached-tools")).toMatchObject({ checked: false, failed: 0, passed: 0 });
  }, 60_000);

  it("skips scenarios needing a feature the runtime lacks, without failing them", async () => {
    const real = engineAdapter();
    const report = await runConformance({ ...real, features: [], capabilities: ["failure-behaviours"] });
    const skipped = report.capabilities[0]!.scenarios.filter((s) => s.status === "skipped");
    expect(skipped.map((s) => s.id)).toContain("failure-behaviours.tool-throwing-transport-error");
    expect(report).toMatchObject({ verdict: "partial", failed: 0, errors: 0 });
  }, 60_000);

  it("never calls a full run conformant when a required scenario was skipped (as raw_output is over the WebSocket)", async () => {
    const real = engineAdapter();
    const suite = loadCapabilities().filter((c) => c.capability === "failure-behaviours");
    const without = await runConformance({ ...real, features: [], suite });
    expect(without).toMatchObject({ verdict: "inconclusive", conformant: false, failed: 0, errors: 0 });
    expect(without.skipped).toBeGreaterThan(0);
    expect(formatHuman(without)).toContain("INCONCLUSIVE — required scenarios were not run: failure-behaviours.tool-throwing-transport-error");
    const withAbility = await runConformance({ ...real, features: ["raw_output"], suite });
    expect(withAbility).toMatchObject({ verdict: "conformant", skipped: 0 });
  }, 60_000);

  it("refuses a --scenario filter that matches no scenario instead of an empty pass", async () => {
    await expect(runConformance({ ...engineAdapter(), scenarioFilter: ["no-such-scenario"] })).rejects.toMatchObject({
      code: "invalid_params",
      message: expect.stringContaining("no scenario matches --scenario no-such-scenario"),
    });
  });
});
