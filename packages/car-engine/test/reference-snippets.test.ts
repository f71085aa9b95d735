/**
 * The TypeScript snippets of cookbooks 01, 03, 04 and 08 and node-api.md's
 * BudgetLimits example, each run in its own Node process against
 * `@car/engine/compat`. Each fixture in test/reference-snippets/ holds the
 * snippet verbatim between marker lines, only its import line changed; what
 * the page leaves to the reader (an `rt`, `callYourLlm`,
 * `readTraceEventsFromDisk`, `proposalJson`) is a small harness part outside
 * the markers, named in the fixture's header. No model and no network: the
 * stand-ins answer deterministically. Where a snippet cannot run unchanged,
 * the test shows the error that stops it and why.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it, vi } from "vitest";

// Each test starts a Node process that compiles the engine from source: seconds each, more on a busy machine.
vi.setConfig({ testTimeout: 90_000 });

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const DIR = new URL("./reference-snippets/", import.meta.url);

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  /** What the harness printed after the snippet (`HARNESS <json>`), parsed. */
  harness: unknown;
}

function runSnippet(name: string): Run {
  const r = spawnSync(process.execPath, ["--import", TSX, "--conditions=source", fileURLToPath(new URL(name, DIR))], { encoding: "utf8", timeout: 60_000 });
  const line = r.stdout.split("\n").find((l) => l.startsWith("HARNESS "));
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, harness: line === undefined ? undefined : JSON.parse(line.slice("HARNESS ".length)) };
}

describe("the fixtures", () => {
  it("change nothing inside the verbatim part but the import line", () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith(".mts"));
    expect(files.length).toBe(12);
    for (const file of files) {
      const text = readFileSync(new URL(file, DIR), "utf8");
      const parts = [...text.matchAll(/^\/\/ ---- verbatim from .*\n([\s\S]*?)^\/\/ ---- end of the verbatim part ----$/gm)].map((m) => m[1]!);
      expect(parts.length, file).toBeGreaterThan(0);
      for (const part of parts) {
        expect(part, file).not.toContain("car-runtime");
        const imports = part.split("\n").filter((l) => /^import .* from /.test(l));
        expect(
          imports.every((l) => l.endsWith("from '@car/engine/compat';")),
          file,
        ).toBe(true);
      }
    }
  });
});

describe("cookbook 01: register, verify, execute", () => {
  it("runs unchanged: the proposal verifies and the callback's result is the action's output", () => {
    const r = runSnippet("cookbook-01.mts");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const { check, result } = r.harness as { check: { valid: boolean; issues: unknown[] }; result: { results: { status: string; output: unknown }[] } };
    expect(check).toMatchObject({ valid: true, issues: [] });
    expect(result.results).toEqual([expect.objectContaining({ status: "succeeded", output: { stdout: "hello\n", stderr: "", code: 0 } })]);
    expect(r.stdout).toContain("status: 'succeeded'"); // the snippet's own console.log
  });
});

describe("cookbook 03: the skills loop", () => {
  it("runs unchanged: ingest, find, report, repair, evolve, list, distill", () => {
    const r = runSnippet("cookbook-03.mts");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.harness).toEqual({
      found: ["deploy-staging"],
      stats: expect.objectContaining({ success_count: 1, fail_count: 0 }), // the snippet's reportOutcome(…, 'success')
      repaired: null, // "null if the skill isn't degraded"
      newSkills: ["engineer/build+deploy"], // evolved from the stand-in trace
      all: ["deploy-staging", "engineer/build+deploy"],
      engineerOnly: ["engineer/build+deploy"], // listSkills filters by domain; deploy-staging's platform is 'node'
      needWork: [],
      distilled: ["engineer/build+deploy"],
      ingestedCount: 0, // evolveSkills already ingested this very skill; an unchanged skill is not recorded twice
    });
  });
});

describe("cookbook 04: multi-agent", () => {
  // The page's AgentSpecs are `{ name, role, model }`; the seeds' AgentSpec is strict
  // `{ name, system_prompt, tools, max_turns, metadata }` (node-api.md's reference note, DECISIONS §5),
  // so every pattern refuses the page's specs before calling the runner. The page's runner would
  // also answer `{ name, response, tool_calls: [] }`, not the seeds' AgentOutput.
  const firstSpec: Record<string, string> = {
    swarm: "agents[0]",
    pipeline: "stages[0]",
    supervisor: "workers[0]",
    "map-reduce": "mapper",
    vote: "agents[0]",
    tournament: "competitors[0]",
  };
  for (const [pattern, where] of Object.entries(firstSpec)) {
    it(`${pattern}: cannot run unchanged — the page's AgentSpec lacks the seed's required fields`, () => {
      const r = runSnippet(`cookbook-04-${pattern}.mts`);
      expect(r.status).toBe(1);
      expect(r.harness).toBeUndefined();
      expect(r.stderr).toContain(`CarError: ${where}: invalid agent spec: /system_prompt: required field 'system_prompt' is missing`);
      expect(r.stderr).toContain("code: 'invalid_params'");
      for (const field of ["tools", "max_turns", "metadata"]) expect(r.stderr).toContain(`required field '${field}' is missing`);
    });
  }
});

describe("cookbook 08: policies", () => {
  it("runs unchanged (but for deny_tool_callback): every policy registers and denies the harness's rm -rf call", () => {
    const r = runSnippet("cookbook-08.mts");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const h = r.harness as { verifyValid: boolean; policies: string[]; status: string; error: string; calls: number; state: unknown };
    expect(h.policies).toEqual([
      "no_shell",
      "no_rm_rf",
      "no_drop_table",
      "no_force_push",
      "tests_must_pass",
      "http_egress",
      "no_writes",
      "no_writes_2",
      "no_writes_3",
      "prod_approved",
    ]);
    // verify does not run policies (the seeds; the page says it does), so the snippet printed nothing.
    expect(h.verifyValid).toBe(true);
    expect(r.stdout).not.toContain("blocked by policies");
    expect(h).toMatchObject({ status: "rejected", calls: 0, state: { tests_passed: true } });
    for (const name of ["no_shell", "no_rm_rf", "no_writes", "prod_approved"]) expect(h.error).toContain(`${name}:`);
    expect(h.error).not.toContain("tests_must_pass"); // the snippet set tests_passed to true
  });

  it("deny_tool_callback cannot run unchanged: the positional form carries no function, refused with a CarError at the call", () => {
    const r = runSnippet("cookbook-08-callback.mts");
    expect(r.status).toBe(1);
    expect(r.harness).toBeUndefined();
    expect(r.stderr).toContain("CarError: policy 'audit_payment' (deny_tool_callback) needs a JavaScript function");
    expect(r.stderr).toContain("code: 'invalid_params'");
    // Thrown synchronously at the call the page does not await — not an unhandled rejection.
    expect(r.stderr).not.toContain("unhandled");
    expect(r.stderr).toMatch(/at CarRuntime\.registerPolicy [^\n]*\n\s+at [^\n]*cookbook-08-callback\.mts/);
  });
});

describe("node-api.md: the BudgetLimits example", () => {
  it("runs unchanged: the budget is read and the tokens the runner reports are counted", () => {
    const r = runSnippet("node-api-budget.mts");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.harness).toMatchObject({
      mode: "parallel",
      agent_calls: 2,
      budget_exceeded: null,
      usage: { input_tokens: 20, output_tokens: 10, total_tokens: 30, unmetered_calls: 0 },
    });
  });
});
