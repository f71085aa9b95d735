/**
 * RuntimeBench over a real WebSocket: `car serve` (in process through
 * `startServer`, and once as a real child process) driven by the
 * conformance suite's WebSocket adapter. Every required capability must pass.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCapabilities, runConformance, wsAdapter, type ConformanceReport } from "@car/conformance";
import { startServer, type RunningServer } from "../src/server/index.ts";


function failuresOf(report: ConformanceReport, requiredOnly: boolean): string[] {
  return report.capabilities
    .filter((c) => !requiredOnly || c.required)
    .flatMap((c) =>
      c.scenarios
        .filter((s) => s.status === "failed")
        .map((s) => `${s.id}: ${s.failures.map((f) => `${f.where} ${f.path}: ${f.message} (expected ${JSON.stringify(f.expected)}, got ${JSON.stringify(f.actual)})`).join("; ")}`),
    );
}

describe("RuntimeBench against car serve (startServer, in process)", () => {
  let carHome: string;
  let server: RunningServer;
  beforeAll(async () => {
    carHome = await mkdtemp(join(tmpdir(), "car-conformance-ws-"));
    server = await startServer({ port: 0, carHome });
  });
  afterAll(async () => {
    await server?.close({ graceMs: 0 });
    await rm(carHome, { recursive: true, force: true });
  });

  for (const cap of loadCapabilities()) {
    it(`${cap.capability} (${cap.required ? "required" : "optional"})`, async () => {
      const report = await runConformance({ ...wsAdapter({ url: server.url, token: server.token }), capabilities: [cap.capability] });
      expect(failuresOf(report, false)).toEqual([]);
    }, 120_000);
  }
});

const carEntry = fileURLToPath(new URL("../src/car.ts", import.meta.url));
const tsxCli = fileURLToPath(new URL("../../../node_modules/tsx/dist/cli.mjs", import.meta.url));

describe("RuntimeBench against a real `car serve` child process", () => {
  let carHome: string;
  let child: ChildProcess | undefined;
  let url: string;
  let token: string;

  beforeAll(async () => {
    carHome = await mkdtemp(join(tmpdir(), "car-conformance-serve-"));
    child = spawn(process.execPath, [tsxCli, "--conditions=source", carEntry, "serve", "--port", "0", "--db", ":memory:"], {
      env: { ...process.env, CAR_HOME: carHome },
      stdio: ["ignore", "pipe", "pipe"],
    });
    ({ url, token } = await new Promise<{ url: string; token: string }>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`car serve did not print its URL and token: ${out}`)), 30_000);
      child!.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const u = /listening on (ws:\/\/\S+)/.exec(out)?.[1];
        const t = /auth token: (\S+)/.exec(out)?.[1];
        if (u !== undefined && t !== undefined) {
          clearTimeout(timer);
          resolve({ url: u, token: t });
        }
      });
      child!.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`car serve exited (${code}) before listening: ${out}`));
      });
    }));
  }, 40_000);

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await rm(carHome, { recursive: true, force: true });
  });

  it("passes every required capability", async () => {
    const report = await runConformance({ ...wsAdapter({ url, token }) });
    expect(failuresOf(report, false)).toEqual([]);
    expect(report.conformant).toBe(true);
  }, 300_000);
});
