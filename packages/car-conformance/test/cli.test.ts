/**
 * The `car-conformance` command end to end: exit status, reports, and a
 * `--cmd` server that is started, discovered from its output and stopped.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnServer } from "../src/spawn-server.ts";

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const tsx = fileURLToPath(new URL("../../../node_modules/tsx/dist/cli.mjs", import.meta.url));

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [tsx, "--conditions=source", cli, ...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : 1, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "car-conformance-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("car-conformance", () => {
  it("passes a required capability against the engine, with JSON and JUnit reports", async () => {
    const json = join(dir, "r.json");
    const junit = join(dir, "r.xml");
    const { code, stdout } = await run(["--engine", "--capability", "rollback", "--json", json, "--junit", junit]);
    expect(code).toBe(0);
    expect(stdout).toContain("rollback (required)");
    expect(stdout).toContain("CONFORMANT");
    const report = JSON.parse(await readFile(json, "utf8"));
    expect(report).toMatchObject({ conformant: true, failed: 0 });
    expect(report.capabilities.map((c: { capability: string }) => c.capability)).toEqual(["rollback"]);
    const xml = await readFile(junit, "utf8");
    expect(xml).toContain('<testsuite name="rollback"');
    expect(xml).toContain('name="rollback.abort-restores-state"');
  }, 120_000);

  it("exits 2 without running scenarios when the --ws server cannot be reached", async () => {
    const { createServer } = await import("node:net");
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((r) => closed.close(() => r()));
    const { code, stdout, stderr } = await run(["--ws", `ws://127.0.0.1:${port}/`, "--capability", "rollback"]);
    expect(code).toBe(2);
    expect(stderr).toContain(`cannot open a session on ws://127.0.0.1:${port}/`);
    expect(stdout).not.toContain("NOT CONFORMANT");
  }, 120_000);

  it("exits 1 with expected versus actual when a required scenario fails", async () => {
    const suite = join(dir, "suite");
    await mkdir(suite, { recursive: true });
    await writeFile(
      join(suite, "wrong.json"),
      JSON.stringify({
        capability: "wrong",
        title: "A deliberately wrong expectation",
        required: true,
        scenarios: [
          {
            id: "wrong.state",
            title: "expects a value the runtime never writes",
            spec: { file: "agent-ir-spec.md", section: "ProposalResult" },
            steps: [{ submit: { actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] } }],
            expect: { state: { k: 2 } },
          },
        ],
      }),
    );
    const junit = join(dir, "wrong.xml");
    const { code, stdout } = await run(["--engine", "--scenarios", suite, "--junit", junit]);
    expect(code).toBe(1);
    expect(stdout).toContain("wrong.state");
    expect(stdout).toContain("expected: 2");
    expect(stdout).toContain("actual:   1");
    expect(stdout).toContain("NOT CONFORMANT");
    expect(await readFile(junit, "utf8")).toContain("<failure");
  }, 120_000);

  it("exits 2 on bad usage", async () => {
    const { code, stderr } = await run(["--ws", "not-a-url"]);
    expect(code).toBe(2);
    expect(stderr).toContain("Usage:");
  }, 60_000);

  it("exits 2 when the --cmd server never listens", async () => {
    const { code, stderr } = await run(["--cmd", `"${process.execPath}" -e "process.exit(3)"`]);
    expect(code).toBe(2);
    expect(stderr).toContain("exited");
  }, 60_000);
});

describe("spawnServer", () => {
  it("reads the URL and token a server prints, and stops the whole process group", async () => {
    const script = "console.log('car serve listening on ws://127.0.0.1:45678/'); console.log('auth token: abcdefghijklmnop'); setInterval(() => {}, 1000);";
    const server = await spawnServer({ command: `"${process.execPath}" -e "${script}"` });
    expect(server.url).toBe("ws://127.0.0.1:45678/");
    expect(server.token).toBe("abcdefghijklmnop");
    await server.stop(2_000);
  });
});
