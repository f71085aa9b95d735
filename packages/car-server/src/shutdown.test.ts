import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runServe } from "./serve-command.ts";
import { startServer } from "./server.ts";
import { recordingServeIo, slowProposal, TestClient } from "../test/test-client.ts";

let carHome: string;
beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-shutdown-"));
});
afterAll(async () => {
  await rm(carHome, { recursive: true, force: true });
});

describe("graceful shutdown", () => {
  it("lets an in-flight proposal finish, refuses new requests meanwhile, then closes", async () => {
    const s = await startServer({ port: 0, carHome });
    const c = await TestClient.open(s.url, s.token);
    await c.result("tools.register", [{ name: "wait" }]);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    c.handle("tools.execute", async () => {
      await released;
      return { result: "done" };
    });
    const submitted = c.call("proposal.submit", slowProposal);
    await c.waitFor((f) => f.method === "tools.execute");

    const closing = s.close({ graceMs: 60_000 });
    const refused = await c.call("state.get", { key: "k" });
    expect(refused.error).toMatchObject({ code: -32024, data: { car_code: "cancelled" } });

    release();
    const result = await submitted;
    expect(result.result).toMatchObject({ proposal_id: "slow", results: [{ status: "succeeded" }, { status: "succeeded" }] });
    await closing;
    expect((await c.closed).code).toBe(1001);
    await expect(stat(join(carHome, "auth-token"))).rejects.toThrow();
    expect(s.connections()).toBe(0);
  });

  it("cancels what is still running when the grace period ends, reporting the proposal and telling the client", async () => {
    const s = await startServer({ port: 0, carHome });
    const c = await TestClient.open(s.url, s.token);
    await c.result("tools.register", [{ name: "wait" }]);
    c.handle("tools.execute", () => undefined);
    const submitted = c.call("proposal.submit", slowProposal);
    const execute = await c.waitFor((f) => f.method === "tools.execute");

    await s.close({ graceMs: 0 });
    const result = (await submitted).result as any;
    expect(result.proposal_id).toBe("slow");
    expect(result.results[0]).toMatchObject({ action_id: "a", status: "failed" });
    expect(result.results[0].error).toMatch(/shutting down|cancel/);
    expect(result.results[1].status).not.toBe("succeeded");
    const cancel = c.notifications("tools.cancel");
    expect(cancel).toHaveLength(1);
    expect(cancel[0].params.request_id).toBe(execute.id);
    expect((await c.closed).code).toBe(1001);
  });

  it("refuses connections that arrive during shutdown", async () => {
    const s = await startServer({ port: 0, carHome, writeTokenFile: false });
    const held = await TestClient.open(s.url, s.token);
    await held.result("tools.register", [{ name: "wait" }]);
    held.handle("tools.execute", () => undefined);
    const submitted = held.call("proposal.submit", slowProposal);
    await held.waitFor((f) => f.method === "tools.execute");
    const closing = s.close({ graceMs: 60_000 });
    // Refused either at the TCP level (the listener is gone) or by an immediate close.
    const late = await TestClient.connect(s.url).then(
      (c) => c.closed,
      (err: Error) => err,
    );
    expect(String(late instanceof Error ? (late as NodeJS.ErrnoException).code : (late as { code: number }).code)).toMatch(/ECONNREFUSED|1001/);
    await s.close({ graceMs: 0 });
    await closing;
    await submitted;
  });
});

describe("runServe", () => {
  const io = () => recordingServeIo(carHome);

  it("prints help, and exits 2 on bad usage or a refused configuration", async () => {
    const help = io();
    expect(await runServe(["--help"], help)).toBe(0);
    expect(help.out.join("\n")).toContain("--no-auth");
    for (const args of [["--port", "http"], ["--frobnicate"], ["extra"], ["--no-auth", "--token", "t"], ["--no-auth", "--host", "0.0.0.0"]]) {
      const bad = io();
      expect(await runServe(args, bad)).toBe(2);
      expect(bad.err[0]).toMatch(/^car serve: /);
    }
    const relative = io();
    relative.env = { CAR_HOME: "relative/dir" };
    expect(await runServe(["--port", "0"], relative)).toBe(2);
    expect(relative.err[0]).toContain("CAR_HOME");
  });

  it("serves until a signal, printing the address and the token it wrote", async () => {
    const session = io();
    const running = runServe(["--port", "0", "--require-auth"], session);
    await expect.poll(() => session.out.length).toBeGreaterThanOrEqual(3);
    const url = session.out[0]!.replace("car serve listening on ", "");
    const token = session.out[1]!.replace("auth token: ", "");
    expect(session.out[2]).toBe(`token file: ${join(carHome, "auth-token")}`);
    expect(session.err[0]).toContain("--require-auth is deprecated");
    const c = await TestClient.open(url, token);
    expect(await c.result("state.keys")).toEqual([]);
    session.signal("SIGTERM");
    expect(await running).toBe(0);
    await c.closed;
  });
});
