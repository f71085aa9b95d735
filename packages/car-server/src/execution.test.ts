import { describe, expect, it } from "vitest";
import { startServer } from "./server.ts";
import { TestClient, useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-exec-");
const client = (): Promise<TestClient> => fx.client();

describe("proposal.submit", () => {
  it("runs a proposal whose tool calls come back to the client as tools.execute, and answers with a ProposalResult", async () => {
    const c = await client();
    const init = await c.result("session.init", {
      client_id: "test",
      tools: [
        { name: "read_file", description: "read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
        { name: "summarize" },
      ],
    });
    expect(init).toMatchObject({ tools_registered: 2, policies_registered: 0 });
    expect(init.session_id).toMatch(/^sess-/);

    const calls: any[] = [];
    c.handle("tools.execute", (params) => {
      calls.push(params);
      if (params.tool === "read_file") return { result: { content: `text of ${params.params.path}` } };
      return { result: { summary: `short: ${params.params.text.content}` } };
    });

    const result = await c.result("proposal.submit", {
      proposal: {
        id: "p1",
        actions: [
          { id: "a1", type: "tool_call", tool: "read_file", parameters: { path: "/tmp/foo.txt" } },
          { id: "a2", type: "tool_call", tool: "summarize", parameters: { text: "$a1.output" }, dependencies: ["a1"] },
          { id: "a3", type: "state_write", parameters: { key: "done", value: true }, dependencies: ["a2"] },
        ],
      },
    });

    expect(result.proposal_id).toBe("p1");
    expect(result.results.map((r: any) => [r.action_id, r.status])).toEqual([
      ["a1", "succeeded"],
      ["a2", "succeeded"],
      ["a3", "succeeded"],
    ]);
    expect(result.results[1].output).toEqual({ summary: "short: text of /tmp/foo.txt" });
    expect(result.cost).toMatchObject({ tool_calls: 2, actions_executed: 3 });

    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ tool: "read_file", action_id: "a1", params: { path: "/tmp/foo.txt" }, attempt: 1, session_id: init.session_id });
    expect(typeof calls[0].request_id).toBe("string");
    expect(calls[0].request_id).not.toBe(calls[1].request_id);
    // The JSON-RPC id of the callback is its request_id.
    const executeFrames = c.frames.filter((f) => f.method === "tools.execute");
    expect(executeFrames.map((f) => f.id)).toEqual(calls.map((p) => p.request_id));

    expect(await c.result("state.get", { key: "done" })).toBe(true);
  });

  it("treats a JSON-RPC error answer as a tool failure, and data.terminal as terminal", async () => {
    const c = await client();
    await c.result("tools.register", [{ name: "flaky" }, { name: "journal" }]);
    c.handle("tools.execute", (params) =>
      params.tool === "flaky"
        ? { error: { code: -32000, message: "tool unavailable" } }
        : { error: { code: -32000, message: "receipt journal is unavailable", data: { terminal: true } } },
    );
    const ordinary = await c.result("proposal.submit", {
      proposal: { actions: [{ id: "f", type: "tool_call", tool: "flaky", failure_behavior: "skip" }] },
    });
    // failure_behavior "skip" after a tool failure is `skipped`, keeping the error text (DECISIONS §14).
    expect(ordinary.results[0]).toMatchObject({ action_id: "f", status: "skipped", error: "tool unavailable" });
    expect(ordinary.results[0].terminal).toBeUndefined();

    const terminal = await c.result("proposal.submit", {
      proposal: { actions: [{ id: "j", type: "tool_call", tool: "journal", failure_behavior: "retry", max_retries: 3 }] },
    });
    expect(terminal.results[0]).toMatchObject({ action_id: "j", status: "failed", terminal: true });
    expect(c.notifications("tools.execute")).toEqual([]);
    expect(c.frames.filter((f) => f.method === "tools.execute" && f.params.tool === "journal")).toHaveLength(1);
  });

  it('reads a {"error": ...} result as an ordinary failure (the seeds\' callback contract)', async () => {
    const c = await client();
    await c.result("tools.register", [{ name: "lookup" }]);
    c.handle("tools.execute", () => ({ result: { error: "no such record" } }));
    const result = await c.result("proposal.submit", { proposal: { actions: [{ id: "l", type: "tool_call", tool: "lookup" }] } });
    expect(result.results[0]).toMatchObject({ status: "failed", error: "no such record" });
  });

  it("sends tools.cancel with the request_id when a tool call times out", async () => {
    const c = await client();
    await c.result("tools.register", [{ name: "slow" }]);
    c.handle("tools.execute", () => undefined); // never answers
    const result = await c.result("proposal.submit", {
      proposal: { actions: [{ id: "s", type: "tool_call", tool: "slow", timeout_ms: 30 }] },
    });
    expect(result.results[0]).toMatchObject({ action_id: "s", status: "failed" });
    expect(result.results[0].error).toMatch(/timed out/);
    const execute = c.frames.find((f) => f.method === "tools.execute");
    const cancel = await c.waitFor((f) => f.method === "tools.cancel");
    expect(cancel.id).toBeUndefined();
    expect(cancel.params).toMatchObject({ request_id: execute.id, action_id: "s" });
    expect(typeof cancel.params.reason).toBe("string");
  });

  it("stops waiting on its own when the action declares no timeout (CAR_TOOL_TIMEOUT), and says so with tools.cancel", async () => {
    const s = await startServer({ port: 0, carHome: fx.carHome, writeTokenFile: false, toolTimeoutMs: 30 });
    const c = await TestClient.open(s.url, s.token);
    try {
      await c.result("tools.register", [{ name: "mute" }]);
      c.handle("tools.execute", () => undefined);
      const result = await c.result("proposal.submit", { proposal: { actions: [{ id: "m", type: "tool_call", tool: "mute" }] } });
      expect(result.results[0]).toMatchObject({ action_id: "m", status: "failed" });
      expect(result.results[0].error).toContain("callback timed out");
      const execute = c.frames.find((f) => f.method === "tools.execute");
      expect(execute.params.timeout_ms).toBeUndefined();
      const cancel = await c.waitFor((f) => f.method === "tools.cancel");
      expect(cancel.params).toMatchObject({ request_id: execute.id, action_id: "m" });
    } finally {
      await c.close();
      await s.close({ graceMs: 0 });
    }
  });

  it("rejects an unregistered tool at admission without calling the client", async () => {
    const c = await client();
    const result = await c.result("proposal.submit", { proposal: { actions: [{ id: "x", type: "tool_call", tool: "nope" }] } });
    expect(result.results[0]).toMatchObject({ action_id: "x", status: "rejected" });
    expect(c.frames.some((f) => f.method === "tools.execute")).toBe(false);
  });

  it("answers a malformed proposal with -32602", async () => {
    const c = await client();
    const reply = await c.call("proposal.submit", { proposal: { actions: [{ id: "a", type: "teleport" }] } });
    expect(reply.error?.code).toBe(-32602);
    expect((reply.error!.data as any).car_code).toBe("invalid_proposal");
    const missing = await c.call("proposal.submit", {});
    expect(missing.error).toMatchObject({ code: -32602, message: "invalid params: proposal is required" });
  });
});

describe("sessions", () => {
  it("keeps fifty concurrent sessions apart: tools, state and callbacks never cross", async () => {
    const sessions = await Promise.all(Array.from({ length: 50 }, () => client()));
    const ids = await Promise.all(
      sessions.map(async (c, i) => {
        const init = await c.result("session.init", { client_id: `c${i}`, tools: [{ name: `echo_${i}` }] });
        c.handle("tools.execute", (params) => ({ result: { who: i, tool: params.tool, value: params.params.value } }));
        return init.session_id as string;
      }),
    );
    expect(new Set(ids).size).toBe(50);

    const results = await Promise.all(
      sessions.map((c, i) =>
        c.result("proposal.submit", {
          proposal: {
            actions: [
              { id: "call", type: "tool_call", tool: `echo_${i}`, parameters: { value: i } },
              { id: "mark", type: "state_write", parameters: { key: "owner", value: i } },
            ],
          },
        }),
      ),
    );
    results.forEach((r, i) => {
      expect(r.results[0]).toMatchObject({ status: "succeeded", output: { who: i, tool: `echo_${i}`, value: i } });
    });

    await Promise.all(
      sessions.map(async (c, i) => {
        expect(await c.result("state.snapshot")).toEqual({ owner: i });
        const tools = await c.result("tools.list");
        expect(tools.tools.map((t: any) => t.name)).toEqual([`echo_${i}`]);
        const execs = c.frames.filter((f) => f.method === "tools.execute");
        expect(execs).toHaveLength(1);
        expect(execs[0].params).toMatchObject({ tool: `echo_${i}`, session_id: ids[i] });
      }),
    );
  });
});
