/**
 * `car serve` as an operator runs it: a busy port is one line and exit 2
 * with the running server's token file untouched, and the structured logs
 * record connections, auth failures, methods, proposals and shutdown without
 * ever holding a token or a parameter value.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";
import { runServe, type ServeIo, startServer } from "@car/server";
import { TestClient } from "../../../packages/car-server/test/test-client.ts";

let carHome: string;
beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-operator-"));
});
afterAll(async () => {
  await rm(carHome, { recursive: true, force: true });
});

describe("start-up failure", () => {
  it("a busy port is one line and exit 2, and the running server's token file stays", async () => {
    const running = await startServer({ port: 0, carHome });
    try {
      const before = await readFile(join(carHome, "auth-token"), "utf8");
      expect(before.trim()).toBe(running.token);
      const r = await runCar(["serve", "--port", String(running.port)], { env: { CAR_HOME: carHome } });
      expect(r.code).toBe(2);
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^car serve: cannot listen on 127\.0\.0\.1:\d+: the address is already in use/);
      expect(r.stdout).toBe("");
      expect(await readFile(join(carHome, "auth-token"), "utf8")).toBe(before);
      // The healthy server still admits its clients.
      const c = await TestClient.open(running.url, running.token);
      expect(await c.result("state.get", { key: "x" })).toBeNull();
      await c.close();
    } finally {
      await running.close({ graceMs: 0 });
    }
  });
});

/** Runs `car serve` in-process with `args`, hands its URL and token to `drive`, then signals shutdown. */
async function serveAndDrive(args: string[], drive: (url: string, token: string) => Promise<void>): Promise<{ code: number; stderr: string[] }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  let signal: ((s: NodeJS.Signals) => void) | undefined;
  let listening!: () => void;
  const ready = new Promise<void>((r) => (listening = r));
  const io: ServeIo = {
    stdout: (line) => {
      stdout.push(line);
      if (line.startsWith("auth token:")) listening();
    },
    stderr: (line) => stderr.push(line),
    env: { CAR_HOME: carHome },
    onSignal: (handler) => {
      signal = handler;
      return () => {};
    },
  };
  const token = "T0KEN-must-never-be-logged-0123456789abcdef";
  const code = runServe(["--port", "0", "--db", ":memory:", "--token", token, ...args], io);
  await ready;
  const url = stdout.find((l) => l.startsWith("car serve listening on "))!.slice("car serve listening on ".length);
  await drive(url, token);
  signal!("SIGTERM");
  return { code: await code, stderr };
}

const SECRET = "SECRET-PARAMETER-VALUE-42";

async function exercise(url: string, token: string): Promise<void> {
  const intruder = await TestClient.connect(url);
  expect((await intruder.call("session.auth", { token: "wrong-token" })).error).toBeDefined();
  await intruder.close();
  const c = await TestClient.open(url, token);
  await c.result("tools.register", [{ name: "echo" }]);
  c.handle("tools.execute", (params) => ({ result: { echoed: params.params.msg } }));
  const r = await c.result("proposal.submit", {
    proposal: { id: "p-logged", actions: [{ id: "a", type: "tool_call", tool: "echo", parameters: { msg: SECRET } }] },
  });
  expect(r.results[0].status).toBe("succeeded");
  expect((await c.call("state.set", { value: SECRET })).error).toBeDefined();
  expect((await c.call("no.such.method", { value: SECRET })).error?.code).toBe(-32601);
  await c.close();
}

describe("structured logs", () => {
  it("json: connections, auth failures, methods with durations and outcomes, proposals, shutdown — no token, no parameter value", async () => {
    const { code, stderr } = await serveAndDrive(["--log-format", "json", "--log-level", "debug"], exercise);
    expect(code).toBe(0);
    const records = stderr.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const events = records.map((r) => r.event);
    for (const e of ["server_started", "connection_opened", "auth_failed", "method", "proposal", "connection_closed", "shutdown"]) expect(events).toContain(e);
    expect(records.find((r) => r.event === "auth_failed")).toMatchObject({ reason: "token_mismatch", level: 40 });
    const submit = records.find((r) => r.event === "method" && r.method === "proposal.submit");
    expect(submit).toMatchObject({ outcome: "ok" });
    expect(typeof submit.duration_ms).toBe("number");
    expect(records.find((r) => r.event === "method" && r.method === "state.set")).toMatchObject({
      outcome: "error",
      rpc_code: -32602,
      car_code: "invalid_params",
    });
    expect(records.find((r) => r.event === "method" && r.method === "no.such.method")).toMatchObject({ outcome: "error", rpc_code: -32601 });
    expect(records.find((r) => r.event === "proposal")).toMatchObject({ proposal_id: "p-logged", statuses: { succeeded: 1 } });
    expect(records.filter((r) => r.event === "shutdown").map((r) => r.stage)).toContain("done");
    const all = stderr.join("\n");
    expect(all).not.toContain("T0KEN-must-never-be-logged");
    expect(all).not.toContain("wrong-token");
    expect(all).not.toContain(SECRET);
  });

  it("human format at info: one readable line per record, methods only at debug", async () => {
    const { code, stderr } = await serveAndDrive([], exercise);
    expect(code).toBe(0);
    expect(stderr.some((l) => /^\S+Z INFO {2}connection_opened conn=\d+/.test(l))).toBe(true);
    expect(stderr.some((l) => /WARN {2}auth_failed conn=\d+ reason=token_mismatch/.test(l))).toBe(true);
    expect(stderr.some((l) => /INFO {2}proposal conn=\d+ proposal_id=p-logged statuses=\{"succeeded":1\}/.test(l))).toBe(true);
    expect(stderr.some((l) => / method conn=\d+ method=tools.register /.test(l))).toBe(false);
    expect(stderr.join("\n")).not.toContain(SECRET);
  });

  it("refuses an unknown level or format", async () => {
    const r = await runCar(["serve", "--log-level", "loud"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--log-level must be one of trace, debug, info, warn, error, fatal, silent, got 'loud'");
  });
});
