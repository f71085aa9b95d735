/** `car serve` as a child process: SIGTERM lets the in-flight proposal finish, then the process exits 0. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slowProposal, TestClient } from "../../../packages/car-server/test/test-client.ts";

const cliRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const tsx = resolve(cliRoot, "../../node_modules/.bin/tsx");

let carHome: string;
beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-signal-"));
});
afterAll(async () => {
  await rm(carHome, { recursive: true, force: true });
});

describe("car serve as a child process", () => {
  it("shuts down on SIGTERM after the in-flight proposal finishes, and exits 0", async () => {
    const child: ChildProcess = spawn(tsx, ["--conditions=source", "src/car.ts", "serve", "--port", "0"], {
      cwd: cliRoot,
      env: { ...process.env, CAR_HOME: carHome },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    try {
      let stdout = "";
      let stderr = "";
      child.stdout!.on("data", (d) => (stdout += d));
      child.stderr!.on("data", (d) => (stderr += d));
      await expect.poll(() => /token file: /.test(stdout), { timeout: 20_000 }).toBe(true);
      const url = /listening on (\S+)/.exec(stdout)![1]!;
      const token = /auth token: (\S+)/.exec(stdout)![1]!;

      const c = await TestClient.open(url, token);
      await c.result("session.init", { client_id: "child", tools: [{ name: "wait" }] });
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      c.handle("tools.execute", async () => {
        await released;
        return { result: "done" };
      });
      const submitted = c.call("proposal.submit", slowProposal);
      await c.waitFor((f) => f.method === "tools.execute");

      child.kill("SIGTERM");
      await expect.poll(() => stderr.includes("finishing in-flight requests")).toBe(true);
      release();
      expect((await submitted).result).toMatchObject({ results: [{ status: "succeeded" }, { status: "succeeded" }] });
      expect((await c.closed).code).toBe(1001);
      expect(await exited).toBe(0);
      await expect(stat(join(carHome, "auth-token"))).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    }
  });
});
