/**
 * `multi.subtask`'s spawns are proposals like any other: the session's
 * admission guard holds each turn to the server's action limit.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let home: string;
let server: RunningServer;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "car-serve-subtask-"));
  server = await startServer({ port: 0, carHome: home, limits: { maxActionsPerProposal: 2 } });
});

afterAll(async () => {
  await server.close({ graceMs: 0 });
  await rm(home, { recursive: true, force: true });
});

describe("multi.subtask under the admission guard", () => {
  it("refuses a turn that spawns more sub-agents than the server's action limit, and runs none of them", async () => {
    const c = await TestClient.open(server.url, server.token);
    let turn = 0;
    c.handle("multi.run_agent", (p) => {
      const answer =
        p.spec.name !== "lead"
          ? "sub answer"
          : ++turn === 1
            ? JSON.stringify({ spawn_subtask: [1, 2, 3].map((n) => ({ task: `part ${n}`, tools: ["grep"] })) })
            : '{"final_answer": "gave up"}';
      return { result: { name: p.spec.name, answer, turns: 1, tool_calls: 0, duration_ms: 1, error: null } };
    });
    const main = { name: "lead", system_prompt: "", tools: ["grep"], max_turns: 3, metadata: {} };
    const result = await c.result("multi.subtask", { main, task: "t" });
    expect(result.subtasks.map((s: { status: string }) => s.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(result.subtasks[0].error).toMatch(/--max-actions/);
    expect(c.frames.filter((f) => f.method === "multi.run_agent" && f.params.spec.name !== "lead")).toHaveLength(0);
    expect(result.final_answer).toBe("gave up");
    await c.close();
  });
});
