/**
 * The original's cookbook clients against `car serve`, each a real process
 * against a server this test starts, with the lines the README names
 * changed (README "The original's clients"): cookbook 06's raw-WebSocket
 * Python client and cookbook 01's WebSocket sketch (Debian's python3 with
 * python3-websockets, which CI installs), and cookbook 04's multi-agent flows
 * from Node over the socket (the original binding's daemon surface,
 * `@car/engine/compat`).
 */
import { execFile } from "node:child_process";
import { PROTOCOL } from "@car/client/protocol";
import { compileSchema, type JsonObject } from "@car/ir";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-cookbook-");
/** Debian's interpreter: its dist-packages hold python3-websockets (a pyenv or venv python may not). */
const PYTHON = "/usr/bin/python3";

function runPython(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const path = fileURLToPath(new URL(`../test/cookbook/${script}`, import.meta.url));
  return new Promise((resolve) => {
    execFile(PYTHON, [path], { env: { PATH: process.env["PATH"] ?? "", ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : 1, stdout, stderr });
    });
  });
}

/** Runs a cookbook's TypeScript client with Node (tsx, the workspace's source condition), as a user's program would run. */
function runNode(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const path = fileURLToPath(new URL(`../test/cookbook/${script}`, import.meta.url));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--conditions=source", "--import", "tsx", path],
      { env: { PATH: process.env["PATH"] ?? "", ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : 1, stdout, stderr });
      },
    );
  });
}

describe("cookbook 01: the WebSocket sketch (Python)", () => {
  it("authenticates, submits, answers tools.execute reading params, and prints the result", async () => {
    const run = await runPython("tool-call-and-verify.py", { CAR_URL: fx.server.url, CAR_AUTH_TOKEN: fx.server.token! });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: 1, result: { ok: true } });
    // The sketch prints the submit's result as a Python dict: the one action ran on the client and succeeded.
    expect(lines[1]).toContain("'action_id': 'a1', 'status': 'succeeded'");
    expect(lines[1]).toContain("'stdout': 'hello\\n'");
  });
});

describe("cookbook 04: the multi-agent flows over the socket (Node)", () => {
  it("runs swarm, pipeline, supervisor, map-reduce, vote and tournament with the client's agent runner", async () => {
    const run = await runNode("multi-agent.ts", { CAR_DAEMON_URL: fx.server.url, CAR_AUTH_TOKEN: fx.server.token! });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const answers = Object.fromEntries(
      run.stdout
        .trim()
        .split("\n")
        .map((line) => [line.slice(0, line.indexOf(" ")), JSON.parse(line.slice(line.indexOf(" ") + 1))]),
    );
    expect(Object.keys(answers)).toEqual(["multi.swarm", "multi.pipeline", "multi.supervisor", "multi.map_reduce", "multi.vote", "multi.tournament"]);
    for (const [method, result] of Object.entries(answers)) {
      expect(compileSchema(PROTOCOL[method as "multi.swarm"].result as unknown as JsonObject)(result), method).toEqual({ ok: true });
      expect(result.failed_calls, method).toBe(0);
    }
    expect(answers["multi.swarm"].outputs.map((o: any) => o.answer)).toEqual([
      "researcher (gpt-5): Should we move the deploy step before the test step?",
      "critic (claude-opus-4-7): Should we move the deploy step before the test step?",
      "writer (claude-sonnet-4-6): Should we move the deploy step before the test step?",
    ]);
    expect(answers["multi.pipeline"]).toMatchObject({ completed: true });
    expect(answers["multi.pipeline"].stages.map((s: any) => s.name)).toEqual(["gather", "design", "critic"]);
    expect(answers["multi.supervisor"]).toMatchObject({ completed: true, final_answer: "binary search done" });
    expect(answers["multi.map_reduce"].map).toHaveLength(3);
    expect(answers["multi.vote"]).toMatchObject({ majority: true, winner: { answer: "no", count: 2 } });
    expect(answers["multi.tournament"].ranking).toHaveLength(3);
  });
});

describe("cookbook 06: the raw WebSocket Python client", () => {
  it("initialises a session, is told memory.* is not served, and runs its proposal through its own tools.execute loop", async () => {
    const run = await runPython("websocket-client.py", { CAR_URL: fx.server.url, CAR_AUTH_TOKEN: fx.server.token! });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: 0, result: { ok: true, auth_enabled: true } });
    expect(JSON.parse(lines[1]!)).toMatchObject({ id: 1, result: { tools_registered: 1, policies_registered: 1 } });
    expect(JSON.parse(lines[2]!)).toMatchObject({ id: 2, error: { code: -32601 } });
    expect(JSON.parse(lines[3]!)).toMatchObject({ id: 3, error: { code: -32601 } });
    expect(lines[4]).toMatch(/^proposal result: /);
    const result = JSON.parse(lines[4]!.replace("proposal result: ", ""));
    expect(result.result.results).toEqual([
      expect.objectContaining({ action_id: "a1", status: "succeeded", output: { stdout: "hi\n", stderr: "", code: 0, ran: "echo hi" } }),
    ]);
  });

  it("is refused at the changed step with a wrong token, and the server closes the connection", async () => {
    const run = await runPython("websocket-client.py", { CAR_URL: fx.server.url, CAR_AUTH_TOKEN: "not-the-token" });
    expect(run.code).not.toBe(0);
    expect(JSON.parse(run.stdout.trim().split("\n")[0]!)).toMatchObject({ id: 0, error: { code: -32603, message: "auth failed: token mismatch" } });
  });
});
