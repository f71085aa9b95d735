import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "car-verify-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("car verify", () => {
  it("reports a valid proposal with its levels and exits 0", async () => {
    const r = await runCar(["verify", fixture("deploy.json"), "--state", "../../../examples/deploy/state.json"], {
      cwd: new URL(".", import.meta.url).pathname,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("proposal a1b2c3d4e5f6: valid");
    expect(r.stdout).toMatch(/0\s+build\n\s+1\s+test\n\s+2\s+deploy\n\s+3\s+record/);
    expect(r.stdout).not.toContain("\x1b[");
  });

  it("reports errors and conflicts by severity and exits 1 when invalid", async () => {
    const r = await runCar(["verify", fixture("findings.json"), "--tools", "http_get,store"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("INVALID");
    expect(r.stdout).toContain("Issues (2 errors, 1 warning)");
    expect(r.stdout).toContain("tool 'publish', which is not registered");
    expect(r.stdout).toContain("cache: written by cache-a and cache-b");
    // errors are listed before warnings
    expect(r.stdout.indexOf("error ")).toBeLessThan(r.stdout.indexOf("warning "));
  });

  it("warns on a misspelt field with a did-you-mean and stays valid; --strict makes it an error (exit 2)", async () => {
    const file = join(tmp, "typo.json");
    writeFileSync(
      file,
      JSON.stringify({
        actions: [
          { id: "a", type: "tool_call", tool: "t" },
          { id: "b", type: "tool_call", tool: "t", dependecies: ["a"], failure_behaviour: "skip" },
        ],
      }),
    );
    const warned = await runCar(["verify", file]);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toContain("unknown field 'dependecies' — did you mean 'dependencies'?");
    expect(warned.stdout).toContain("unknown field 'failure_behaviour' — did you mean 'failure_behavior'?");
    const strict = await runCar(["verify", file, "--strict"]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain("/actions/1/dependecies: unknown field 'dependecies' — did you mean 'dependencies'?");
    expect(strict.stderr).toContain("/actions/1/failure_behaviour");
  });

  it("reads dotted tool names in a --tools list as names, not as a file", async () => {
    const r = await runCar(["verify", fixture("findings.json"), "--tools", "http_get,store,publish,db.delete", "--state", fixture("approved.json"), "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("reads an inline JSON array of names and ToolSchemas, and refuses inline JSON that is not one", async () => {
    const schemas = JSON.stringify(["http_get", "publish", "db.delete", { name: "store", parameters: { type: "object", required: ["nope"] } }]);
    const r = await runCar(["verify", fixture("findings.json"), "--tools", schemas, "--state", fixture("approved.json"), "--json"]);
    const issues = JSON.parse(r.stdout).issues as { message: string }[];
    expect(issues.some((i) => i.message.includes("not registered"))).toBe(false);
    expect(issues.some((i) => i.message.includes("nope"))).toBe(true);
    const obj = await runCar(["verify", fixture("findings.json"), "--tools", '{"http_get": 1}']);
    expect(obj.code).toBe(2);
    expect(obj.stderr).toContain("inline --tools JSON must be an array");
    const broken = await runCar(["verify", fixture("findings.json"), "--tools", '["http_get"']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("neither a file nor valid inline JSON");
  });

  it("prints the VerificationResult as JSON with --json", async () => {
    const r = await runCar(["verify", fixture("findings.json"), "--json"]);
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout);
    expect(result.valid).toBe(false);
    expect(result.execution_levels).toEqual([["fetch", "cache-a", "cache-b"], ["publish"]]);
    expect(result.conflicts).toEqual([["cache-a", "cache-b", "cache"]]);
    expect(result.issues.every((i: { tier: string }) => typeof i.tier === "string")).toBe(true);
  });

  it("reads the proposal from stdin with -", async () => {
    const r = await runCar(["verify", "-", "--json"], { input: readFileSync(fixture("deploy.json"), "utf8") });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).valid).toBe(true);
  });

  it("checks parameters against ToolSchemas from a JSON file", async () => {
    const tools = join(tmp, "tools.json");
    writeFileSync(
      tools,
      JSON.stringify([
        "http_get",
        "store",
        { name: "publish", parameters: { type: "object", properties: { target: { type: "string", enum: ["staging"] } }, required: ["target"] } },
      ]),
    );
    const state = join(tmp, "state.json");
    writeFileSync(state, JSON.stringify({ approved: true }));
    const r = await runCar(["verify", fixture("findings.json"), "--tools", tools, "--state", state, "--json"]);
    const result = JSON.parse(r.stdout);
    expect(r.code).toBe(1);
    const errors = result.issues.filter((i: { severity: string }) => i.severity === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0].action_id).toBe("publish");
    expect(errors[0].message).toMatch(/schema|enum|must be/i);
  });

  it("takes the registry from a tools.json of programs, with their schemas", async () => {
    const tools = join(tmp, "programs.json");
    writeFileSync(
      tools,
      JSON.stringify({
        http_get: { command: ["curl"] },
        store: "./store.sh",
        publish: { command: ["./publish"], schema: { parameters: { type: "object", properties: { target: { const: "staging" } } } } },
      }),
    );
    const r = await runCar(["verify", fixture("findings.json"), "--tools", tools, "--state", fixture("approved.json"), "--json"]);
    expect(r.code).toBe(1);
    const errors = JSON.parse(r.stdout).issues.filter((i: { severity: string }) => i.severity === "error");
    expect(errors.map((e: { action_id: string }) => e.action_id)).toEqual(["publish"]);
  });

  it("takes the registry from a tools module", async () => {
    const r = await runCar(["verify", fixture("deploy.json"), "--tools", new URL("../../../examples/deploy/tools.mjs", import.meta.url).pathname, "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).valid).toBe(true);
  });

  it("enforces --max-actions", async () => {
    const r = await runCar(["verify", fixture("deploy.json"), "--max-actions", "3", "--json"]);
    expect(r.code).toBe(1);
    const issues = JSON.parse(r.stdout).issues as { severity: string; message: string }[];
    expect(issues.some((i) => i.severity === "error" && /3/.test(i.message))).toBe(true);
  });

  it("draws the plan as DOT with levels, edges and highlighted findings", async () => {
    const r = await runCar(["verify", fixture("findings.json"), "--format", "dot"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^digraph /);
    expect(r.stdout).toContain('subgraph "cluster_level_1"');
    expect(r.stdout).toContain('"fetch" -> "publish";');
    expect(r.stdout).toMatch(/"cache-a" -> "cache-b" \[dir=none, style=dashed, color="#c00000".*conflict: cache/);
    expect(r.stdout).toMatch(/"publish" \[[^\]]*fillcolor="#f8d0d0"/);
  });

  it("writes the report to a file with --output", async () => {
    const out = join(tmp, "plan.html");
    const r = await runCar(["verify", fixture("deploy.json"), "--format", "html", "-o", out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(readFileSync(out, "utf8")).toMatch(/^<!DOCTYPE html>/);
  });

  it.each([
    [["verify"], /missing argument <proposal.json>/],
    [["verify", "a.json", "b.json"], /unexpected argument 'b.json'/],
    [["verify", "x.json", "--frobnicate"], /unknown option '--frobnicate'/],
    [["verify", "x.json", "--format", "svg"], /--format must be/],
    [["verify", "x.json", "--max-actions", "many"], /--max-actions must be a positive integer/],
    [["verify", "/nonexistent/proposal.json"], /cannot read proposal '\/nonexistent\/proposal.json': no such file/],
  ])("exits 2 with a clear message for %j", async (args, message) => {
    const r = await runCar(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
  });

  it("exits 2 naming the problem for JSON that is not a proposal", async () => {
    const bad = await runCar(["verify", "-"], { input: "{ not json" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/proposal stdin is not valid JSON/);
    const malformed = await runCar(["verify", "-"], {
      input: JSON.stringify({
        actions: [
          { id: "a", type: "tool_call" },
          { id: "a", type: "teleport" },
        ],
      }),
    });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/\/actions\/\d/);
  });

  it("colors the report only when asked to", async () => {
    const r = await runCar(["verify", fixture("findings.json")], { env: { NO_COLOR: undefined, FORCE_COLOR: "1" } });
    expect(r.stdout).toContain("\x1b[31m");
  });

  it("checks the trace rules of --policies against the orders the plan permits, and shows the rollback contract", async () => {
    const dir = join(tmp, "trace-policies");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "release.toml"), '[[trace_rule]]\nkind = "only_after"\ntool = "deploy"\nafter = "run_tests"\n');
    const proposal = join(tmp, "unordered.json");
    writeFileSync(
      proposal,
      JSON.stringify({
        id: "rel",
        actions: [
          { id: "t", type: "tool_call", tool: "run_tests" },
          { id: "d", type: "tool_call", tool: "deploy", reversibility: "compensable", compensation: { type: "tool", tool: "undeploy" } },
          { id: "mail", type: "tool_call", tool: "send_email" },
        ],
      }),
    );
    const r = await runCar(["verify", proposal, "--policies", dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("trace_rule:only_after(deploy,run_tests): the DAG permits 'd' to run before any 'run_tests' succeeded");
    expect(r.stdout).toContain("Rollback: declared irreversible; not fully undoable");
    expect(r.stdout).toMatch(/ {2}t: irreversible\n {2}mail: irreversible/);
    const without = await runCar(["verify", proposal]);
    expect(without.stdout).not.toContain("trace_rule:");
    writeFileSync(join(dir, "broken.toml"), '[[trace_rule]]\nkind = "only_after"\ntool = "deploy"\n');
    const broken = await runCar(["verify", proposal, "--policies", dir]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(join(dir, "broken.toml"));
  });

  describe("on a large conflict-heavy proposal", () => {
    // 3,000 unordered writers over 3 keys, each also requiring a key no one provides.
    const big = join(tmp, "big.json");
    writeFileSync(
      big,
      JSON.stringify({
        id: "big",
        actions: Array.from({ length: 3000 }, (_, i) => ({
          id: `a${i}`,
          type: "tool_call",
          tool: "t",
          parameters: { i },
          preconditions: [{ key: "ready", operator: "exists" }],
          expected_effects: { [`k${i % 3}`]: i },
        })),
      }),
    );

    it("groups findings per kind and key in text, with counts and bounded samples", async () => {
      const r = await runCar(["verify", big]);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain("3000 actions have a precondition on 'ready' that cannot hold ('a0', 'a1', 'a2', 'a3', 'a4' and 2995 more)");
      expect(r.stdout).toMatch(/999 pairs of actions write 'k0' with no dependency path between them/);
      expect(r.stdout).toMatch(/k0: 999 pairs written with no order between them: .* … and 979 more/);
      expect(r.stdout).toMatch(/\n\s+0\s+a0, a1, .*a19 … and 2980 more\n/);
      // One error per kind+key, one warning and one partial-check note per key: the report stays short.
      expect(r.stdout.split("\n").length).toBeLessThan(80);
    });

    it("keeps every conflict in --json", async () => {
      const r = await runCar(["verify", big, "--json"]);
      const result = JSON.parse(r.stdout);
      expect(result.conflicts).toHaveLength(3 * 999);
      expect(result.execution_levels[0]).toHaveLength(3000);
    });

    it("draws only the first actions in HTML, saying how many are left out", async () => {
      const out = join(tmp, "big.html");
      const r = await runCar(["verify", big, "--format", "html", "-o", out]);
      expect(r.code).toBe(1);
      const html = readFileSync(out, "utf8");
      expect(html).toContain("The drawing shows the first 1000 actions in level order; 2000 more are left out");
      expect(html.match(/class="action /g)).toHaveLength(1000);
    });

    it("refuses a proposal over --max-proposal-actions or --max-proposal-bytes before any work, naming the limit", async () => {
      const actions = await runCar(["verify", big, "--max-proposal-actions", "2999"]);
      expect(actions.code).toBe(2);
      expect(actions.stderr).toContain("proposal has 3000 actions, over the limit of 2999 (max_proposal_actions)");
      const bytes = await runCar(["verify", big, "--max-proposal-bytes", "1000"]);
      expect(bytes.code).toBe(2);
      expect(bytes.stderr).toMatch(/proposal text is \d+ characters, over the limit of 1000 \(max_proposal_bytes\)/);
      expect(bytes.stdout).toBe("");
    });
  });
});
