import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolStreamChunk } from "@car/ir";
import { describe, expect, it } from "vitest";
import { AsyncQueue } from "../src/index.ts";
import { fakeRuntime, tc } from "./helpers.ts";

describe("detached tools", () => {
  it("streaming: dispatch returns a handle, the DAG proceeds, polls drain chunks, the terminal status is seen once", async () => {
    const { rt } = fakeRuntime();
    const feed = new AsyncQueue<ToolStreamChunk>();
    rt.registerTool("tail", () => feed);
    rt.registerTool("next", () => "ran");
    const r = await rt.executeProposal({ actions: [tc("s", "tail", { invocation_mode: "streaming" }), tc("n", "next", { dependencies: ["s"] })] });
    const output = r.results[0]!.output as { tool_handle: string; status: string };
    expect(output.status).toBe("running");
    expect(r.results[1]!.status).toBe("succeeded");
    const handle = output.tool_handle;
    feed.push({ kind: "text", text: "line 1" });
    feed.push({ kind: "progress", fraction: 0.5 });
    await new Promise((res) => setImmediate(res));
    expect(rt.toolPoll(handle)).toMatchObject({
      status: "running",
      tool: "tail",
      action_id: "s",
      chunks: [
        { kind: "text", text: "line 1" },
        { kind: "progress", fraction: 0.5 },
      ],
    });
    expect(rt.toolPoll(handle)!.chunks).toEqual([]);
    feed.push({ kind: "done", result: { exit: 0 } });
    await new Promise((res) => setImmediate(res));
    expect(rt.toolPoll(handle)).toMatchObject({ status: "succeeded", result: { exit: 0 }, chunks: [{ kind: "done", result: { exit: 0 } }] });
    expect(rt.toolPoll(handle)).toBeNull();
  });

  it("cancel aborts the tool's signal and seals the handle; subscribe streams live chunks", async () => {
    const { rt } = fakeRuntime();
    let signal: AbortSignal | undefined;
    rt.registerTool("gen", (_p, ctx) => {
      signal = ctx.signal;
      return (async function* () {
        yield { kind: "text", text: "a" };
        yield { kind: "text", text: "b" };
        await new Promise(() => {});
      })();
    });
    const r = await rt.executeProposal({ actions: [tc("g", "gen", { invocation_mode: "streaming", idempotent: true })] });
    const handle = (r.results[0]!.output as { tool_handle: string }).tool_handle;
    const seen: string[] = [];
    for await (const event of rt.toolSubscribe(handle)) {
      seen.push((event.chunk as { text: string }).text);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(["a", "b"]);
    expect(rt.toolCancel(handle)).toBe(true);
    expect(signal?.aborted).toBe(true);
    expect(rt.toolPoll(handle)).toMatchObject({ status: "cancelled" });
    expect(rt.toolPoll(handle)).toBeNull();
    expect(rt.toolCancel(handle)).toBe(false);
    // Detached calls bypass the idempotency cache: a second start is a new invocation.
    const again = await rt.executeProposal({ actions: [tc("g", "gen", { invocation_mode: "streaming", idempotent: true })] });
    expect(again.cost.tool_calls).toBe(1);
    expect((again.results[0]!.output as { tool_handle: string }).tool_handle).not.toBe(handle);
    await rt.close();
  });

  it("long_running: the promise's result or error ends the invocation", async () => {
    const { rt } = fakeRuntime();
    let finish: (v: unknown) => void = () => {};
    rt.registerTool("job", () => new Promise((resolve) => (finish = resolve)));
    rt.registerTool("doomed", () => Promise.reject(new Error("crashed")));
    const r = await rt.executeProposal({
      actions: [tc("j", "job", { invocation_mode: "long_running" }), tc("d", "doomed", { invocation_mode: "long_running" })],
    });
    const [job, doomed] = r.results.map((x) => (x.output as { tool_handle: string }).tool_handle);
    await new Promise((res) => setImmediate(res));
    expect(rt.toolPoll(doomed!)).toMatchObject({ status: "failed", error: "crashed" });
    finish({ built: true });
    await new Promise((res) => setImmediate(res));
    expect(rt.toolPoll(job!)).toMatchObject({ status: "succeeded", result: { built: true } });
  });
});

describe("policies from files", () => {
  it("loadPolicies applies a directory's rules; a malformed file fails loudly", async () => {
    const dir = mkdtempSync(join(tmpdir(), "car-engine-policies-"));
    try {
      mkdirSync(join(dir, "ok"));
      writeFileSync(join(dir, "ok", "security.toml"), 'deny_tool = ["deploy"]\n');
      const { rt } = fakeRuntime();
      rt.registerTool("deploy", () => "deployed");
      expect(rt.loadPolicies(join(dir, "ok"))).toBe(1);
      const r = await rt.executeProposal({ actions: [tc("d", "deploy")] });
      expect(r.results[0]).toMatchObject({ status: "rejected", error: expect.stringMatching(/^denied by policy: deny_tool:deploy/) });
      mkdirSync(join(dir, "bad"));
      writeFileSync(join(dir, "bad", "broken.toml"), "deny_tool = [\n");
      expect(() => rt.loadPolicies(join(dir, "bad"))).toThrow(/broken\.toml/);
      expect(rt.loadPolicies(join(dir, "missing"))).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
