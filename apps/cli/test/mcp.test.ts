/**
 * `car mcp` driven by the MCP SDK's own Client over a real stdio transport
 * that spawns the command.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAR_NODE_ARGS } from "./run-car.ts";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")) as Record<string, unknown>;

let root: string;
let client: Client;

async function call(name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  return { isError: result.isError === true, body: JSON.parse(content[0]!.text) as Record<string, any> };
}

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-mcp-")));
  const repo = join(root, "repo");
  mkdirSync(join(repo, ".car", "policies"), { recursive: true });
  mkdirSync(join(repo, "pkg"), { recursive: true });
  execFileSync("git", ["init", "-q", repo]);
  writeFileSync(join(repo, ".car", "policies", "rules.toml"), 'deny_tool = ["WebFetch"]\n');
  mkdirSync(join(root, "home"));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CAR_NODE_ARGS, "mcp"],
    cwd: repo,
    env: { ...(process.env as Record<string, string>), CAR_HOME: join(root, "home") },
    stderr: "pipe",
  });
  client = new Client({ name: "car-cli-test", version: "1.0.0" });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("car mcp", () => {
  it("lists the eight tools with JSON Schemas for their inputs", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "equivalent",
      "optimize",
      "policy_check",
      "simulate",
      "skill_find",
      "skill_ingest",
      "skill_list",
      "verify",
    ]);
    const verify = tools.find((t) => t.name === "verify")!;
    expect(verify.inputSchema.type).toBe("object");
    expect(verify.inputSchema.required).toEqual(["proposal"]);
    expect(verify.inputSchema.properties).toHaveProperty("max_actions");
    expect(tools.find((t) => t.name === "policy_check")!.inputSchema.required).toEqual(["tool"]);
  });

  it("answers policy_check with the gate's decision document, from a subdirectory", async () => {
    const denied = await call("policy_check", { tool: "WebFetch", params: { url: "https://docs.rs" }, cwd: join(root, "repo", "pkg") });
    expect(denied.isError).toBe(false);
    expect(denied.body.decision).toBe("deny");
    expect(denied.body.basis).toBe("denied_by_rule");
    expect(denied.body.findings[0].rule).toBe("deny_tool:WebFetch");
    const allowed = await call("policy_check", { tool: "Bash", params: { command: "ls" } });
    expect(allowed.body).toMatchObject({ decision: "allow", basis: "passed_rules", inspected_as: "shell" });
  });

  it("denies every call while a policy file does not load, naming it", async () => {
    const broken = join(root, "broken");
    mkdirSync(join(broken, ".car", "policies"), { recursive: true });
    writeFileSync(join(broken, ".car", "policies", "bad.toml"), "deny_tool = [ oops");
    const r = await call("policy_check", { tool: "Bash", params: { command: "ls" }, cwd: broken });
    expect(r.body).toMatchObject({ decision: "deny", basis: "policy_load_failed" });
    expect(JSON.stringify(r.body.load_errors)).toContain(join(broken, ".car", "policies", "bad.toml"));
  });

  it("verifies a proposal statelessly", async () => {
    const r = await call("verify", { proposal: fixture("findings.json"), tools: ["http_get", "store", "publish"], state: { approved: true } });
    expect(r.isError).toBe(false);
    expect(r.body.valid).toBe(true);
    expect(r.body.conflicts).toEqual([["cache-a", "cache-b", "cache"]]);
    const capped = await call("verify", { proposal: fixture("deploy.json"), max_actions: 2 });
    expect(capped.body.valid).toBe(false);
  });

  it("simulates, optimizes and compares proposals", async () => {
    const sim = await call("simulate", { proposal: fixture("deploy.json"), initial_state: { tests_passed: false } });
    expect(sim.body.state).toMatchObject({ deployed: true, last_deploy: "staging" });

    const phantom = { actions: [{ id: "a", type: "state_write", parameters: { key: "k", value: 1 }, state_dependencies: ["never_written"] }] };
    const opt = await call("optimize", { proposal: phantom });
    expect(opt.body.pruned).toEqual({ a: ["never_written"] });
    expect(opt.body.proposal.actions[0].state_dependencies ?? []).toEqual([]);

    const a = { actions: [{ id: "w", type: "state_write", parameters: { key: "z", value: 1 }, expected_effects: { z: 1 } }] };
    const b = { actions: [{ id: "w", type: "state_write", parameters: { key: "z", value: 2 }, expected_effects: { z: 2 } }] };
    const same = await call("equivalent", { proposal_a: a, proposal_b: a, test_states: [] });
    expect(same.body).toMatchObject({ equivalent: true, probes: 2 });
    const differ = await call("equivalent", { proposal_a: a, proposal_b: b });
    expect(differ.body).toMatchObject({ equivalent: false, difference: { key: "z", left: 1, right: 2 } });
  });

  it("reports bad arguments and malformed proposals as tool errors, and keeps serving", async () => {
    const missing = await call("verify", {});
    expect(missing.isError).toBe(true);
    expect(missing.body.error.code).toBe("invalid_params");
    const malformed = await call("verify", { proposal: { actions: [{ id: "x", type: "teleport" }] } });
    expect(malformed.isError).toBe(true);
    expect(malformed.body.error.code).toBe("invalid_proposal");
    const tooMany = await call("verify", { proposal: fixture("deploy.json"), max_actions: 5000 });
    expect(tooMany.isError).toBe(true);
    const after = await call("simulate", { proposal: fixture("deploy.json") });
    expect(after.isError).toBe(false);
  });
});

describe("car mcp: names, annotations and evidence fields", () => {
  const proposal = {
    actions: [
      { id: "w", type: "state_write", parameters: { key: "k", value: 1 }, preconditions: [{ key: "ready", value: true }] },
      { id: "after", type: "state_read", parameters: { key: "k" }, dependencies: ["w"] },
    ],
  };

  it("annotates every tool but skill_ingest as read-only, idempotent and closed-world; skill_ingest as a destructive write", async () => {
    const { tools } = await client.listTools();
    for (const t of tools.filter((t) => t.name !== "skill_ingest"))
      expect(t.annotations, t.name).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(tools.find((t) => t.name === "skill_ingest")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false });
  });

  it("takes initial_state everywhere, accepts the older `state`, and names an unknown key", async () => {
    const withInitial = await call("verify", { proposal, initial_state: { ready: true } });
    expect(withInitial.body.valid).toBe(true);
    const withAlias = await call("verify", { proposal, state: { ready: true } });
    expect(withAlias.body).toEqual(withInitial.body);
    expect((await call("verify", { proposal })).body.valid).toBe(false);
    const both = await call("verify", { proposal, state: {}, initial_state: {} });
    expect(both.isError).toBe(true);
    expect(both.body.error.message).toContain("'initial_state' and 'initial_state' are the same argument");
    const typo = await call("simulate", { proposal, intial_state: {} });
    expect(typo.isError).toBe(true);
    expect(typo.body.error.message).toBe("unknown argument 'intial_state' for simulate; it takes proposal, initial_state");
  });

  it("simulate reports skipped actions; equivalent reports its tier and the states it tested", async () => {
    const sim = await call("simulate", { proposal, initial_state: { ready: false } });
    expect(sim.body).toEqual({ state: { ready: false }, skipped: ["w", "after"] });
    const byDefault = await call("equivalent", { proposal_a: proposal, proposal_b: proposal });
    expect(byDefault.body).toMatchObject({ equivalent: true, tier: "sampled", states_tested: 2, used_default_states: true });
    const given = await call("equivalent", { proposal_a: proposal, proposal_b: proposal, test_states: [{ ready: true }, { ready: false }, {}] });
    expect(given.body).toMatchObject({ tier: "sampled", states_tested: 3, used_default_states: false });
  });
});

describe("car mcp on hostile input", () => {
  it("answers a line over 10 MiB and a line that is not JSON with JSON-RPC errors, and keeps serving", async () => {
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [...CAR_NODE_ARGS, "mcp"], {
      env: { ...process.env, CAR_HOME: join(root, "home") },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const replies: any[] = [];
    let buffered = "";
    const waiters: { n: number; resolve: () => void }[] = [];
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buffered += d;
      let i: number;
      while ((i = buffered.indexOf("\n")) !== -1) {
        replies.push(JSON.parse(buffered.slice(0, i)));
        buffered = buffered.slice(i + 1);
      }
      for (const w of [...waiters]) if (replies.length >= w.n) w.resolve();
    });
    const until = (n: number) => new Promise<void>((resolve) => (replies.length >= n ? resolve() : waiters.push({ n, resolve })));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const send = (text: string) => child.stdin.write(`${text}\n`);
    try {
      send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
        }),
      );
      await until(1);
      send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      // 11 MiB in one line, written in pieces as a pipe would deliver it.
      const big = JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "verify", arguments: { proposal: { actions: [], pad: "x".repeat(11 * 1024 * 1024) } } },
      });
      for (let i = 0; i < big.length; i += 1 << 20) child.stdin.write(big.slice(i, i + (1 << 20)));
      send("");
      send("{not json");
      send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }));
      await until(4);
      expect(replies[1]).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("too large") } });
      expect(replies[2]).toMatchObject({ id: null, error: { code: -32700 } });
      expect(replies[3].id).toBe(3);
      expect(replies[3].result.tools).toHaveLength(8);
    } finally {
      child.stdin.end();
    }
    expect(await exited).toBe(0);
  }, 60_000);
});
