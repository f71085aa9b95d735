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
  it("calls a filtered run PARTIAL, never CONFORMANT, and says so in the JSON and JUnit reports", async () => {
    const json = join(dir, "r.json");
    const junit = join(dir, "r.xml");
    const { code, stdout } = await run(["--engine", "--capability", "rollback", "--json", json, "--junit", junit]);
    expect(code).toBe(0);
    expect(stdout).toContain("rollback (required)");
    expect(stdout).toContain("PARTIAL — a filtered run (--capability rollback)");
    expect(stdout).not.toContain("CONFORMANT");
    const report = JSON.parse(await readFile(json, "utf8"));
    expect(report).toMatchObject({ verdict: "partial", conformant: false, failed: 0, errors: 0, filters: { capabilities: ["rollback"], scenarios: [] } });
    expect(report.suite_version).toMatch(/^\d+\.\d+\.\d+/);
    expect(report.spec_revision).toContain("agent-ir-spec.md");
    expect(report.features).toEqual(["approvals", "detached-tools", "rate-limits", "raw_output", "reference", "supervision", "waiting-approvals"]);
    expect(report.capabilities.map((c: { capability: string }) => c.capability)).toEqual(["rollback"]);
    const xml = await readFile(junit, "utf8");
    expect(xml).toMatch(/<testsuites [^>]*errors="0"[^>]*timestamp="\d{4}-\d\d-\d\dT/);
    expect(xml).toMatch(/<testsuite name="rollback" [^>]*errors="0"[^>]*timestamp="[^"]+" hostname="[^"]+"/);
    expect(xml).toContain('<property name="verdict" value="partial"/>');
    expect(xml).toContain('<property name="filter_capabilities" value="rollback"/>');
    expect(xml).toContain(`<property name="suite_version" value="${report.suite_version}"/>`);
    expect(xml).toContain('name="rollback.abort-restores-state"');
  }, 120_000);

  it("reports undeclared optional capabilities as not checked and refuses an unknown feature", async () => {
    const suite = join(dir, "optional-suite");
    await mkdir(suite, { recursive: true });
    const scenario = {
      id: "extra.write",
      title: "a write lands",
      spec: { file: "agent-ir-spec.md", section: "ProposalResult" },
      steps: [{ submit: { actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] } }],
      expect: { state: { k: 1 } },
    };
    await writeFile(
      join(suite, "base.json"),
      JSON.stringify({ capability: "base", title: "base", required: true, scenarios: [{ ...scenario, id: "base.write" }] }),
    );
    await writeFile(
      join(suite, "extra.json"),
      JSON.stringify({ capability: "extra", title: "extra", required: false, scenarios: [{ ...scenario, id: "extra.write", expect: { state: { k: 2 } } }] }),
    );
    const quiet = await run(["--engine", "--scenarios", suite]);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(/extra \(optional\)\s+not checked \(feature not declared\)/);
    expect(quiet.stdout).toContain("CONFORMANT — every required capability passed (1 passed, 0 failed, 0 not judged, 1 skipped");
    expect(quiet.stdout).toContain("not checked: extra");
    const claimed = await run(["--engine", "--scenarios", suite, "--features", "extra"]);
    expect(claimed.code).toBe(1);
    expect(claimed.stdout).toContain("NOT CONFORMANT — failing: extra");
    const typo = await run(["--engine", "--scenarios", suite, "--features", "extras"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown feature: extras (known: extra)");
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

  it("exits 2 when --scenario matches nothing", async () => {
    const { code, stdout, stderr } = await run(["--engine", "--scenario", "rollback.no-such-thing"]);
    expect(code).toBe(2);
    expect(stderr).toContain("no scenario matches --scenario rollback.no-such-thing");
    expect(stdout).not.toContain("PARTIAL");
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
