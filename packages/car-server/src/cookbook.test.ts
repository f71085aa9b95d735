/**
 * The original's cookbook clients against `car serve`, with only their
 * connection step changed (README "The original's clients"): cookbook 06's
 * raw-WebSocket Python client runs as a real process (Debian's python3 with
 * python3-websockets, which CI installs) against a server this test starts,
 * and does what the cookbook says it does.
 */
import { execFile } from "node:child_process";
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
