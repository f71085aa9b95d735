/**
 * RuntimeBench over a real WebSocket against `car serve` with its defaults:
 * a durable SQLite database in CAR_HOME shared by every session. Each
 * scenario's connection negotiates `session.isolated.v1`, so leftover state
 * from earlier scenarios (or earlier processes) never reaches it. Covered:
 * in process through `startServer` on the default store, and the package
 * README's two commands run as written — `--cmd "car serve --port 0"` and
 * `--ws` against a running `car serve` — through a `car` on PATH.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCapabilities, runConformance, wsAdapter, type ConformanceReport } from "@car/conformance";
import { openServeStore, type RunningServer, type ServeStore, startServer } from "@car/server";

function failuresOf(report: ConformanceReport): string[] {
  return report.capabilities.flatMap((c) =>
    c.scenarios
      .filter((s) => s.status === "failed" || s.status === "error")
      .map(
        (s) =>
          `${s.id}: ${s.failures.map((f) => `${f.where} ${f.path}: ${f.message} (expected ${JSON.stringify(f.expected)}, got ${JSON.stringify(f.actual)})`).join("; ")}`,
      ),
  );
}

/** What `car serve` over this source declares beyond the required capabilities. */
const SERVE_FEATURES = ["detached-tools", "rate-limits", "reference", "supervision", "waiting-approvals"];

describe("RuntimeBench against car serve on its default durable store (startServer, in process)", () => {
  let carHome: string;
  let store: ServeStore | undefined;
  let server: RunningServer;
  beforeAll(async () => {
    carHome = await mkdtemp(join(tmpdir(), "car-conformance-ws-"));
    store = await openServeStore(undefined, { CAR_HOME: carHome });
    server = await startServer({ port: 0, carHome, ...(store === undefined ? {} : { store }) });
  });
  afterAll(async () => {
    await server?.close({ graceMs: 0 });
    await store?.close?.();
    await rm(carHome, { recursive: true, force: true });
  });

  // The optional capabilities car serve does not declare here are not checked; `approvals` is, below, on a server whose standing tier allows full_access.
  for (const cap of loadCapabilities().filter((c) => c.required || SERVE_FEATURES.includes(c.capability))) {
    it(`${cap.capability} (${cap.required ? "required" : "optional"})`, async () => {
      const report = await runConformance({ ...wsAdapter({ url: server.url, token: server.token, features: SERVE_FEATURES }), capabilities: [cap.capability] });
      expect(failuresOf(report)).toEqual([]);
    }, 120_000);
  }

  it("approvals (optional, claimed) passes against a server whose standing tier allows full_access (car serve --tier full_access)", async () => {
    const gated = await startServer({ port: 0, carHome, standingTier: "full_access", ...(store === undefined ? {} : { store }) });
    try {
      const report = await runConformance({ ...wsAdapter({ url: gated.url, token: gated.token, features: ["approvals"] }), capabilities: ["approvals"] });
      expect(failuresOf(report)).toEqual([]);
      expect(report.capabilities[0]).toMatchObject({ capability: "approvals", checked: true, skipped: 0 });
      expect(report.passed).toBe(report.capabilities[0]!.scenarios.length);
    } finally {
      await gated.close({ graceMs: 0 });
    }
  }, 120_000);

  it("leaves the shared database untouched: isolated sessions write nothing to it", async () => {
    expect(store!.state.snapshot()).toEqual({});
  });
});

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const carEntry = join(repoRoot, "apps/cli/src/car.ts");
const conformanceCli = join(repoRoot, "packages/car-conformance/src/cli.ts");
const tsxCli = join(repoRoot, "node_modules/tsx/dist/cli.mjs");

describe("the package README's commands against `car serve` with its defaults", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  /** `car-conformance ARGS` as a user runs it, with `car` on PATH. */
  function conformance(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [tsxCli, "--conditions=source", conformanceCli, ...args],
        { env, timeout: 280_000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : 1, stdout, stderr });
        },
      );
    });
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "car-conformance-readme-"));
    const bin = join(dir, "bin");
    await mkdir(bin);
    const car = join(bin, "car");
    await writeFile(car, `#!/bin/sh\nexec "${process.execPath}" "${tsxCli}" --conditions=source "${carEntry}" "$@"\n`);
    await chmod(car, 0o755);
    env = { ...process.env, PATH: `${bin}${delimiter}${process.env["PATH"] ?? ""}`, CAR_HOME: join(dir, "home") };
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // The one required scenario JSON-RPC cannot carry (a tool answering with text that is not JSON) is skipped over the
  // WebSocket, and a run that skipped a required scenario is never called CONFORMANT: everything else passes.
  const NOT_RUN_OVER_WS = "INCONCLUSIVE — required scenarios were not run: failure-behaviours.tool-throwing-transport-error";

  it('car-conformance --cmd "car serve --port 0" --junit runtimebench.xml passes everything it can run, and says what it could not', async () => {
    const junit = join(dir, "runtimebench.xml");
    const { code, stdout, stderr } = await conformance(["--cmd", "car serve --port 0", "--junit", junit]);
    expect({ code, tail: stdout.split("\n").slice(-3).join("\n") }).toMatchObject({ code: 1 });
    expect(stdout).toContain(NOT_RUN_OVER_WS);
    expect(stdout).toContain(" 0 failed, 0 not judged, ");
    expect(stderr).not.toContain("✗");
  }, 300_000);

  describe("--ws against a running default car serve", () => {
    let child: ChildProcess | undefined;
    let url: string;
    let token: string;
    beforeAll(async () => {
      child = spawn("car", ["serve", "--port", "0"], { env, stdio: ["ignore", "pipe", "pipe"] });
      // Drain the server log: an unread stderr pipe fills up (three runs log more than 64 KiB) and its shutdown then waits forever.
      child.stderr!.resume();
      ({ url, token } = await new Promise<{ url: string; token: string }>((resolve, reject) => {
        let out = "";
        const timer = setTimeout(() => reject(new Error(`car serve did not print its URL and token: ${out}`)), 60_000);
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
    }, 70_000);
    afterAll(async () => {
      if (child !== undefined && child.exitCode === null) {
        const exited = new Promise((resolve) => child!.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    });

    it('car-conformance --ws URL --token "$CAR_AUTH_TOKEN" passes twice in a row on the same database', async () => {
      env["CAR_AUTH_TOKEN"] = token;
      for (let run = 0; run < 2; run++) {
        const { code, stdout } = await conformance([
          "--ws",
          url,
          "--token",
          token,
          "--capability",
          "rollback",
          "--capability",
          "preconditions",
          "--capability",
          "ordering",
        ]);
        expect({ run, code, tail: stdout.split("\n").slice(-2).join("\n") }).toMatchObject({ run, code: 0 });
        expect(stdout).toContain("PARTIAL");
        expect(stdout).toContain("everything selected passed");
      }
      const { code, stdout } = await conformance(["--ws", url, "--token", token]);
      expect({ code, tail: stdout.split("\n").slice(-2).join("\n") }).toMatchObject({ code: 1 });
      expect(stdout).toContain(NOT_RUN_OVER_WS);
      expect(stdout).toContain(" 0 failed, 0 not judged, ");
    }, 300_000);
  });
});
