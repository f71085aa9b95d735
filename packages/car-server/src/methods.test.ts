import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer } from "./server.ts";
import { TestClient, useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-methods-");
const client = (): Promise<TestClient> => fx.client();

describe("state.*", () => {
  it("gets, sets, checks and lists keys, with __proto__ as an ordinary key", async () => {
    const c = await client();
    expect(await c.result("state.get", { key: "missing" })).toBeNull();
    expect(await c.result("state.exists", { key: "missing" })).toBe(false);
    expect(await c.result("state.set", { key: "count", value: 3 })).toBe("ok");
    expect(await c.result("state.set", { key: "__proto__", value: { polluted: true } })).toBe("ok");
    expect(await c.result("state.set", { key: "nothing" })).toBe("ok");
    expect(await c.result("state.get", { key: "count" })).toBe(3);
    expect(await c.result("state.exists", { key: "__proto__" })).toBe(true);
    expect(await c.result("state.get", { key: "__proto__" })).toEqual({ polluted: true });
    expect(await c.result("state.keys")).toEqual(["count", "__proto__", "nothing"]);
    const snap = await c.result("state.snapshot", {});
    expect(Object.keys(snap)).toEqual(["count", "__proto__", "nothing"]);
    expect(snap.nothing).toBeNull();
    expect(({} as any).polluted).toBeUndefined();
  });

  it("scopes keys by tenant_id so tenants and unscoped callers never see each other's keys", async () => {
    const c = await client();
    await c.result("state.set", { key: "k", value: "plain" });
    await c.result("state.set", { key: "k", value: "acme's", tenant_id: "acme" });
    expect(await c.result("state.get", { key: "k" })).toBe("plain");
    expect(await c.result("state.get", { key: "k", tenant_id: "acme" })).toBe("acme's");
    expect(await c.result("state.exists", { key: "k", tenant_id: "other" })).toBe(false);
    expect(await c.result("state.keys")).toEqual(["k"]);
    expect(await c.result("state.keys", { tenant_id: "acme" })).toEqual(["k"]);
    expect(await c.result("state.snapshot", { tenant_id: "acme" })).toEqual({ k: "acme's" });
    expect(await c.result("state.snapshot")).toEqual({ k: "plain" });
  });

  it("names the missing field in a -32602", async () => {
    const c = await client();
    expect((await c.call("state.get", {})).error).toMatchObject({ code: -32602, message: "invalid params: key is required" });
    expect((await c.call("state.set", { key: 5 })).error).toMatchObject({ code: -32602, message: "invalid params: key must be a string" });
  });
});

describe("events.*", () => {
  it("counts and queries the session's audit log, most recent first, with filters", async () => {
    const c = await client();
    expect(await c.result("events.count", null)).toBe(0);
    await c.result("proposal.submit", {
      proposal: {
        id: "ev1",
        actions: [
          { id: "w1", type: "state_write", parameters: { key: "a", value: 1 } },
          { id: "w2", type: "state_write", parameters: { key: "b", value: 2 }, dependencies: ["w1"] },
        ],
      },
    });
    const total = await c.result("events.count");
    expect(total).toBeGreaterThan(2);

    const all = await c.result("events.query", {});
    expect(all.count).toBe(total);
    const seqs = all.events.map((e: any) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a: number, b: number) => b - a));
    expect(all.events.at(-1).kind).toBe("proposal_received");

    const succeeded = await c.result("events.query", { kinds: ["action_succeeded"], proposal_id: "ev1" });
    expect(succeeded.events.map((e: any) => e.action_id)).toEqual(["w2", "w1"]);
    const one = await c.result("events.query", { kinds: ["action_succeeded"], limit: 1 });
    expect(one).toMatchObject({ count: 1, events: [{ action_id: "w2" }] });
    const byAction = await c.result("events.query", { action_id: "w1", kinds: ["action_succeeded"] });
    expect(byAction.count).toBe(1);

    expect((await c.call("events.query", { limit: -1 })).error?.code).toBe(-32602);
    expect((await c.call("events.query", { since: "yesterday" })).error?.code).toBe(-32602);
  });
});

describe("policy.* and permission.classify", () => {
  it("registers, enforces, lists and unregisters policies", async () => {
    const c = await client();
    await c.result("session.init", {
      client_id: "p",
      tools: [{ name: "shell" }],
      policies: [{ name: "no_rm", rule: "deny_tool_param", target: "shell", key: "command", pattern: "rm -rf" }],
    });
    expect(await c.result("policy.register", { name: "needs_tests", rule: "require_state", key: "tests_passed", value: true })).toEqual({
      registered: "needs_tests",
      name: "needs_tests",
      scope: "global",
    });
    const listed = await c.result("policy.list");
    expect(listed.scope).toBe("global");
    expect(listed.policies.map((p: any) => [p.name, p.owner])).toEqual([
      ["no_rm", "session"],
      ["needs_tests", "session"],
    ]);
    expect(listed.policies[0].description).toContain("deny_tool_param");

    c.handle("tools.execute", () => ({ result: { ok: true } }));
    await c.result("state.set", { key: "tests_passed", value: true });
    // `rm -rf` is full_access (DECISIONS §16): approved, so the policy is what decides.
    await c.result("permission.approve", { action: { id: "rm", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /" } } });
    const denied = await c.result("proposal.submit", {
      proposal: { actions: [{ id: "rm", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /" } }] },
    });
    expect(denied.results[0].status).toBe("rejected");
    expect(denied.results[0].error).toContain("no_rm");
    expect(c.frames.some((f) => f.method === "tools.execute")).toBe(false);

    expect(await c.result("policy.unregister", { name: "no_rm" })).toEqual({ unregistered: "no_rm", removed: 1, scope: "global" });
    expect(await c.result("policy.unregister", { name: "no_rm" })).toMatchObject({ removed: 0 });
    const allowed = await c.result("proposal.submit", {
      proposal: { actions: [{ id: "rm", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /" } }] },
    });
    expect(allowed.results[0].status).toBe("succeeded");
  });

  it("refuses callback rules, unknown kinds and incomplete definitions, registering nothing from a bad batch", async () => {
    const c = await client();
    expect((await c.call("policy.register", { name: "cb", rule: "deny_tool_callback", target: "x" })).error?.code).toBe(-32602);
    expect((await c.call("policy.register", { name: "u", rule: "teleport" })).error?.code).toBe(-32602);
    expect((await c.call("policy.register", { name: "d", rule: "deny_tool" })).error?.message).toContain("target");
    const batch = await c.call("session.init", {
      tools: [{ name: "fine" }],
      policies: [
        { name: "ok", rule: "deny_tool", target: "x" },
        { name: "bad", rule: "deny_tool_param", target: "x" },
      ],
    });
    expect(batch.error?.code).toBe(-32602);
    expect(await c.result("policy.list")).toEqual({ policies: [], scope: "global" });
    expect(await c.result("tools.list")).toEqual({ tools: [], count: 0 });
  });

  it("classifies each action and reports the declared rollback contract", async () => {
    const c = await client();
    const result = await c.result("permission.classify", {
      proposal: {
        actions: [
          { id: "r", type: "tool_call", tool: "read_file", parameters: { path: "notes.txt" }, reversibility: "reversible" },
          { id: "d", type: "tool_call", tool: "deploy_service", parameters: {}, reversibility: "compensable" },
        ],
      },
    });
    expect(result.declared_rollback_contract).toBe("compensable");
    expect(result.classifications).toHaveLength(2);
    expect(result.classifications[0]).toMatchObject({ action_id: "r", tool: "read_file", missing_compensation: false });
    expect(result.classifications[1]).toMatchObject({ action_id: "d", tool: "deploy_service", required_tier: "full_access", missing_compensation: true });
    expect(await c.result("permission.classify", { proposal: { actions: [] } })).toEqual({ classifications: [], declared_rollback_contract: "reversible" });
    const undeclared = await c.result("permission.classify", { proposal: { actions: [{ id: "x", type: "state_read", parameters: { key: "k" } }] } });
    expect(undeclared.declared_rollback_contract).toBe("irreversible");
  });
});

describe("operator policy files", () => {
  it("loads <CAR_HOME>/policies into every session and refuses sessions when a file does not parse", async () => {
    const home = await mkdtemp(join(tmpdir(), "car-serve-policies-"));
    await mkdir(join(home, "policies"));
    await writeFile(join(home, "policies", "ops.toml"), 'deny_tool = ["deploy"]\n');
    const s = await startServer({ port: 0, carHome: home });
    try {
      const c = await TestClient.open(s.url, s.token);
      fx.track(c);
      await c.result("tools.register", [{ name: "deploy" }]);
      expect((await c.result("policy.list")).policies).toEqual([
        { name: "deny_tool:deploy", description: "operator rule (<CAR_HOME>/policies): read-only", owner: "operator", read_only: true },
      ]);
      const r = await c.result("proposal.submit", { proposal: { actions: [{ id: "d", type: "tool_call", tool: "deploy" }] } });
      expect(r.results[0].status).toBe("rejected");

      await writeFile(join(home, "policies", "broken.toml"), "deny_tool = [unterminated\n");
      const refused = await TestClient.connect(s.url);
      const closed = await refused.closed;
      expect(closed.code).toBe(1011);
      expect(closed.reason).toContain("broken.toml");
    } finally {
      await s.close({ graceMs: 0 });
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe("verify / simulate / optimize / equivalent", () => {
  const proposal = {
    actions: [
      { id: "w", type: "state_write", parameters: { key: "x", value: 1 }, expected_effects: { x: 1 } },
      { id: "t", type: "tool_call", tool: "search", parameters: { q: 5 }, state_dependencies: ["ghost"], expected_effects: { found: true } },
    ],
  };

  it("verify checks tool calls against the session's tools once it has any", async () => {
    const c = await client();
    const before = await c.result("verify", { proposal });
    expect(before.issues.some((i: any) => /search/.test(i.message) && /unknown|not registered/i.test(i.message))).toBe(false);
    await c.result("tools.register", [{ name: "search", parameters: { type: "object", properties: { q: { type: "string" } } } }]);
    const after = await c.result("verify", { proposal });
    expect(after.valid).toBe(false);
    expect(after.issues.some((i: any) => i.action_id === "t" && i.severity === "error")).toBe(true);
    expect(after.execution_levels.flat().sort()).toEqual(["t", "w"]);
    await c.result("tools.register", [{ name: "other" }]);
    const unknown = await c.result("verify", { proposal });
    expect(unknown.issues.some((i: any) => i.action_id === "t" && /search/.test(i.message))).toBe(true);
  });

  it("verify warns on a misspelt field with a did-you-mean; strict (verify and proposal.submit) refuses it as invalid_proposal", async () => {
    const c = await client();
    const typo = { actions: [{ id: "a", type: "state_write", parameters: { key: "k", value: 1 }, max_retry: 2 }] };
    const warned = await c.result("verify", { proposal: typo });
    expect(warned.valid).toBe(true);
    expect(warned.issues).toContainEqual(
      expect.objectContaining({ action_id: "a", severity: "warning", message: expect.stringContaining("did you mean 'max_retries'?") }),
    );
    for (const method of ["verify", "proposal.submit"]) {
      const refused = await c.call(method, { proposal: typo, strict: true });
      expect(refused.error).toMatchObject({ data: { car_code: "invalid_proposal" }, message: expect.stringContaining("/actions/0/max_retry") });
    }
    expect((await c.call("verify", { proposal: typo, strict: "yes" })).error).toMatchObject({ data: { car_code: "invalid_params" } });
    expect(await c.result("state.snapshot", {})).toEqual({});
  });

  it("simulate, optimize and equivalent answer over the wire", async () => {
    const c = await client();
    const sim = await c.result("simulate", { proposal, initial_state: { ghost: 1 } });
    expect(sim.state).toEqual({ ghost: 1, x: 1, found: true });
    expect(sim.skipped).toEqual([]);
    const skipped = await c.result("simulate", { proposal });
    expect(skipped.skipped).toEqual(["t"]);

    const optimized = await c.result("optimize", { proposal });
    expect(optimized.actions[1].state_dependencies).toEqual([]);
    expect(optimized.actions.map((a: any) => a.id)).toEqual(["w", "t"]);

    expect(await c.result("equivalent", { proposal_a: proposal, proposal_b: optimized })).toMatchObject({ equivalent: true });
    const diff = await c.result("equivalent", {
      proposal_a: proposal,
      proposal_b: { actions: [{ id: "w", type: "state_write", parameters: { key: "x", value: 2 }, expected_effects: { x: 2 } }] },
      test_states: [{ ghost: 0 }],
    });
    expect(diff).toMatchObject({ equivalent: false, probes: 1 });
    expect((await c.call("equivalent", { proposal_a: proposal })).error?.code).toBe(-32602);
  });
});

describe("detached tools", () => {
  it("starts a long_running tool call, polls it, streams its events and cancels another", async () => {
    const c = await client();
    await c.result("tools.register", [{ name: "build" }]);
    expect(await c.result("tools.stream.subscribe", {})).toEqual({ subscribed: true });
    expect(await c.result("tools.stream.subscribe", {})).toEqual({ subscribed: true });

    let answer: ((v: unknown) => void) | undefined;
    c.handle("tools.execute", (params) =>
      params.params.target === "slow" ? undefined : new Promise((resolve) => (answer = () => resolve({ result: { built: params.params.target } }))),
    );
    const result = await c.result("proposal.submit", {
      proposal: {
        actions: [
          { id: "b", type: "tool_call", tool: "build", parameters: { target: "app" }, invocation_mode: "long_running" },
          { id: "s", type: "tool_call", tool: "build", parameters: { target: "slow" }, invocation_mode: "long_running" },
        ],
      },
    });
    const handle = result.results[0].output.tool_handle;
    const slow = result.results[1].output.tool_handle;
    expect(result.results[0].output.status).toBe("running");

    const running = await c.result("tools.poll", { handle });
    expect(running).toMatchObject({ tool: "build", action_id: "b", status: "running", chunks: [] });

    answer!(undefined);
    const done = await c.waitFor((f) => f.method === "tools.stream.event" && f.params.chunk.kind === "done");
    expect(done.params.chunk.result).toEqual({ built: "app" });
    expect(c.notifications("tools.stream.event").filter((f) => f.params.chunk.kind === "done")).toHaveLength(1);
    const finished = await c.result("tools.poll", { handle });
    expect(finished).toMatchObject({ status: "succeeded", result: { built: "app" } });
    expect(await c.result("tools.poll", { handle })).toBeNull();

    expect(await c.result("tools.cancel", { handle: slow })).toEqual({ cancelled: true });
    const execSlow = c.frames.find((f) => f.method === "tools.execute" && f.params.params.target === "slow");
    const cancelNote = await c.waitFor((f) => f.method === "tools.cancel" && f.params.request_id === execSlow.id);
    expect(cancelNote.params.action_id).toBe("s");
    expect(await c.result("tools.poll", { handle: slow })).toMatchObject({ status: "cancelled" });
    expect(await c.result("tools.cancel", { handle: "unknown" })).toEqual({ cancelled: false });
    expect((await c.call("tools.poll", {})).error?.code).toBe(-32602);
  });

  it("lists and unregisters tools", async () => {
    const c = await client();
    expect(await c.result("tools.register", { tools: [{ name: "b", description: "bee" }, { name: "a" }] })).toBe(2);
    const listed = await c.result("tools.list");
    expect(listed.count).toBe(2);
    expect(listed.tools.map((t: any) => t.name)).toEqual(["a", "b"]);
    expect(listed.tools[1]).toMatchObject({ name: "b", description: "bee", source: "user_defined", parameters: {}, idempotent: false });
    expect(await c.result("tools.unregister", { name: "a" })).toEqual({ unregistered: "a", removed: 1 });
    expect(await c.result("tools.unregister", { name: "a" })).toEqual({ unregistered: "a", removed: 0 });
    expect((await c.call("tools.unregister", {})).error?.code).toBe(-32602);
    expect((await c.call("tools.register", [{ name: "bad", parameters: { type: 5 } }])).error?.code).toBe(-32602);
  });
});
