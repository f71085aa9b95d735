/**
 * The OS sandbox beside the reader, for real: bubblewrap, the runtime's
 * filtering proxy and two HTTP listeners on 127.0.0.1 started here — one
 * standing for an allowlisted host (the policy lists `127.0.0.1:<port>`),
 * one for an unlisted host. Evasions the static reader lets through run
 * inside the sandbox through `car sandbox-exec`, the hook's wrapped command
 * and `car run`'s program tools; the unlisted listener must never see a
 * connection, the allowlisted one must answer, protected paths stay unwritten.
 *
 * Needs bubblewrap, socat and ripgrep (`.ci/run` installs them). Nothing here
 * skips: without them the file fails, saying what to install.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { policyCheck } from "@car/policy/gate";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCar } from "./run-car.ts";

const CAR_TIMEOUT = 90_000;
// Each test starts car (and the sandbox) a few times on a shared machine.
vi.setConfig({ testTimeout: 180_000 });

/** Connects directly (`direct`) or through the sandbox's HTTP proxy (`proxy`); prints `reached: <body>` or `blocked: <why>`. */
const PROBE = `
import net from "node:net";
import http from "node:http";
import { readFileSync } from "node:fs";
let [how, port] = process.argv.slice(2);
const tool = how === "tool";
if (tool) ({ how, port } = JSON.parse(readFileSync(0, "utf8")).params);
const say = (outcome) => {
  process.stdout.write(tool ? JSON.stringify({ outcome }) : outcome + "\\n");
  process.exit(0);
};
setTimeout(() => say("blocked: timed out"), 10000);
if (how === "direct") {
  const socket = net.connect(Number(port), "127.0.0.1");
  socket.on("connect", () => socket.write("GET / HTTP/1.0\\r\\n\\r\\n"));
  socket.on("data", (d) => say("reached: " + String(d).split("\\r\\n\\r\\n")[1]));
  socket.on("error", (e) => say("blocked: " + e.code));
} else {
  const proxy = process.env.HTTP_PROXY ? new URL(process.env.HTTP_PROXY) : undefined;
  if (proxy === undefined) say("blocked: no proxy");
  const auth = Buffer.from(decodeURIComponent(proxy.username) + ":" + decodeURIComponent(proxy.password)).toString("base64");
  const target = "http://127.0.0.1:" + port + "/";
  http
    .get({ host: proxy.hostname, port: proxy.port, path: target, headers: { host: "127.0.0.1:" + port, "proxy-authorization": "Basic " + auth } }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => say(res.statusCode === 200 ? "reached: " + body : "blocked: HTTP " + res.statusCode));
    })
    .on("error", (e) => say("blocked: " + e.code));
}
`;

interface Listener {
  server: Server;
  port: number;
  connections: number;
}

let root: string;
let repo: string;
let carHome: string;
let allowed: Listener;
let unlisted: Listener;
/** A PATH holding every program of /usr/bin and /bin except bubblewrap. */
let noBwrapPath: string;

async function listen(name: string): Promise<Listener> {
  const listener: Listener = { server: createServer((_req, res) => res.end(`hello from ${name}`)), port: 0, connections: 0 };
  listener.server.on("connection", () => listener.connections++);
  await new Promise<void>((done) => listener.server.listen(0, "127.0.0.1", done));
  listener.port = (listener.server.address() as AddressInfo).port;
  return listener;
}

function writePolicy(dir: string, name: string, toml: string): void {
  mkdirSync(join(dir, ".car", "policies"), { recursive: true });
  writeFileSync(join(dir, ".car", "policies", name), toml);
}

/** A git work tree with the probe, a secret and the given policy. */
function workspace(name: string, policy: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  execFileSync("git", ["init", "-q", dir]);
  writeFileSync(join(dir, "probe.mjs"), PROBE);
  writeFileSync(join(dir, ".env"), "SECRET=1\n");
  writePolicy(dir, "sandbox.toml", policy);
  return dir;
}

/** Runs without blocking this process, which serves the listeners. */
const shell = promisify(execFile);

const car = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  runCar(args, { cwd, env: { CAR_HOME: carHome, ...env }, timeoutMs: CAR_TIMEOUT });

beforeAll(async () => {
  const missing = ["bwrap", "socat", "rg"].filter((p) => spawnSync("sh", ["-c", `command -v ${p}`]).status !== 0);
  if (missing.length > 0) throw new Error(`the sandbox tests need ${missing.join(", ")}: apt-get install bubblewrap socat ripgrep (.ci/run does)`);
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-sandbox-")));
  carHome = join(root, "car-home");
  mkdirSync(carHome);
  allowed = await listen("allowed");
  unlisted = await listen("unlisted");
  repo = workspace(
    "repo",
    `[sandbox]\nallowed_hosts = ["127.0.0.1:${allowed.port}"]\n\n[[deny_tool_param]]\ntool = "Write"\nparam = "file_path"\ncontains = ".env"\n`,
  );
  noBwrapPath = join(root, "bin");
  mkdirSync(noBwrapPath);
  for (const dir of ["/usr/bin", "/bin"]) {
    for (const name of readdirSync(dir)) {
      if (name === "bwrap" || existsSync(join(noBwrapPath, name))) continue;
      symlinkSync(join(dir, name), join(noBwrapPath, name));
    }
  }
}, 60_000);

afterAll(async () => {
  for (const l of [allowed, unlisted]) if (l !== undefined) await new Promise((done) => l.server.close(done));
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

/** An evasion of the reader: the connection is made by a script file, handed to a shell as text. */
const evasion = (port: number) => `printf '%s' 'node probe.mjs direct ${port}' | sh`;

describe("the reader alone", () => {
  it("lets through what the sandbox is there to stop", async () => {
    for (const command of [evasion(unlisted.port), `node probe.mjs direct ${unlisted.port}`]) {
      expect(policyCheck("Bash", { command }, repo, { carHome }).decision).not.toBe("deny");
    }
    // And without the sandbox the evasion reaches the unlisted listener: the tests below can fail.
    const before = unlisted.connections;
    expect((await shell("sh", ["-c", evasion(unlisted.port)], { cwd: repo, encoding: "utf8" })).stdout).toBe("reached: hello from unlisted\n");
    expect(unlisted.connections).toBe(before + 1);
  });
});

describe("car policy lint", () => {
  it("shows each file's sandbox request, so the setting is never invisible", async () => {
    const r = await car(["policy", "lint", join(repo, ".car", "policies")], repo);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`sandbox:on allowed_hosts=["127.0.0.1:${allowed.port}"]`);
    expect(r.stdout).toContain("2 rules loaded");
  });
});

describe("car sandbox-exec", () => {
  it("keeps an evasion from an unlisted host while the allowlisted one answers", async () => {
    const before = unlisted.connections;
    const command = [evasion(unlisted.port), `node probe.mjs proxy ${unlisted.port}`, `node probe.mjs proxy ${allowed.port}`].join("; ");
    const r = await car(["sandbox-exec", "-c", command], repo);
    expect(r.code, r.stderr).toBe(0);
    const [direct, viaProxy, listed] = r.stdout.trim().split("\n");
    expect(direct).toBe("blocked: ECONNREFUSED");
    expect(viaProxy).toBe("blocked: HTTP 403");
    expect(listed).toBe("reached: hello from allowed");
    expect(unlisted.connections).toBe(before);
  });

  it("cannot write a protected path or the policy, and can write the rest of the workspace", async () => {
    const command = "echo leaked > .env; echo $?; printf 'sandbox = false' > .car/policies/sandbox.toml; echo $?; echo made > out.txt; echo $?; exit 7";
    const r = await car(["sandbox-exec", "-c", command], repo);
    expect(r.code).toBe(7);
    expect(r.stdout.trim().split("\n")).toEqual(["1", "1", "0"]);
    expect(readFileSync(join(repo, ".env"), "utf8")).toBe("SECRET=1\n");
    expect(readFileSync(join(repo, ".car", "policies", "sandbox.toml"), "utf8")).toContain("allowed_hosts");
    expect(readFileSync(join(repo, "out.txt"), "utf8")).toBe("made\n");
  });
});

describe("the hook's wrap", () => {
  it("answers a Bash call with ask and a command that runs in the sandbox", async () => {
    const before = unlisted.connections;
    const command = `${evasion(unlisted.port)}; echo leaked > .env; node probe.mjs proxy ${allowed.port}`;
    const payload = JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash", cwd: repo, tool_input: { command, description: "probe" } });
    const r = await runCar(["policy-check-hook"], { input: payload, env: { CAR_HOME: carHome }, cwd: root });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("ask");
    expect(out.permissionDecisionReason).toContain(`network only to 127.0.0.1:${allowed.port}`);
    expect(out.updatedInput.description).toBe("probe");
    expect(out.updatedInput.command).toContain("sandbox-exec --if-available -c ");
    // Run as the host runs a Bash command: the text, by a shell, in the session's directory.
    const ran = await shell("bash", ["-c", out.updatedInput.command], { cwd: repo, encoding: "utf8", timeout: CAR_TIMEOUT });
    expect(ran.stdout.trim().split("\n")).toEqual(["blocked: ECONNREFUSED", "reached: hello from allowed"]);
    expect(ran.stderr).toMatch(/\.env: (Permission denied|Read-only file system)/);
    expect(readFileSync(join(repo, ".env"), "utf8")).toBe("SECRET=1\n");
    expect(unlisted.connections).toBe(before);
  });

  it("cannot wrap a Codex shell call: noted when the sandbox is wanted, denied when it is required", async () => {
    const codex = (cwd: string) =>
      JSON.stringify({ hook_event_name: "PreToolUse", model: "gpt-5-codex", tool_name: "shell", cwd, tool_input: { command: ["bash", "-lc", "ls"] } });
    const wanted = await runCar(["policy-check-hook"], { input: codex(repo), env: { CAR_HOME: carHome }, cwd: root });
    expect(wanted.stdout).toBe("");
    expect(wanted.stderr).toContain("this shell call cannot be put in the sandbox");
    const strict = workspace("strict", 'sandbox = "required"\n');
    const required = await runCar(["policy-check-hook"], { input: codex(strict), env: { CAR_HOME: carHome }, cwd: root });
    const denied = JSON.parse(required.stdout).hookSpecificOutput;
    expect(denied.permissionDecision).toBe("deny");
    expect(denied.permissionDecisionReason).toContain("a policy requires the sandbox");
  });
});

describe("car run's program tools", () => {
  const outcomes = (stdout: string) => (JSON.parse(stdout) as { results: { output: { outcome: string } }[] }).results.map((r) => r.output.outcome);

  it("run inside the sandbox when a policy asks for it, and outside with --no-sandbox", async () => {
    const before = unlisted.connections;
    const r = await car(["run", proposal("sandboxed", true), "--tools", tools(repo), "--json", "--db", ":memory:"], repo);
    expect(r.code, r.stderr).toBe(0);
    expect(outcomes(r.stdout)).toEqual(["blocked: ECONNREFUSED", "reached: hello from allowed"]);
    expect(unlisted.connections).toBe(before);
    const open = await car(["run", proposal("unsandboxed", true), "--tools", tools(repo), "--json", "--db", ":memory:", "--no-sandbox"], repo);
    expect(open.code, open.stderr).toBe(0);
    expect(outcomes(open.stdout)).toEqual(["reached: hello from unlisted", "blocked: no proxy"]);
    expect(unlisted.connections).toBe(before + 1);
  });

  it("stop a program that outlives its time inside the sandbox too", async () => {
    writeFileSync(
      join(repo, "hang.mjs"),
      'import { appendFileSync } from "node:fs";\nappendFileSync("ticks.txt", ".");\nsetInterval(() => appendFileSync("ticks.txt", "."), 100);\n',
    );
    const file = join(repo, "hang-tools.json");
    writeFileSync(file, JSON.stringify({ hang: { command: [process.execPath, "./hang.mjs"], timeout_ms: 4000 } }));
    const plan = join(root, "hang.json");
    writeFileSync(plan, JSON.stringify({ id: "hang", actions: [{ id: "h", type: "tool_call", tool: "hang", parameters: {} }] }));
    const r = await car(["run", plan, "--tools", file, "--json", "--db", ":memory:"], repo);
    expect(JSON.parse(r.stdout).results[0].error).toBe("tool 'hang' timed out after 4000 ms; the program was stopped");
    const ticks = readFileSync(join(repo, "ticks.txt"), "utf8").length;
    expect(ticks).toBeGreaterThan(0);
    await new Promise((done) => setTimeout(done, 1000));
    expect(readFileSync(join(repo, "ticks.txt"), "utf8").length).toBe(ticks);
  });

  it("refuses --no-sandbox when a policy requires the sandbox, before anything runs", async () => {
    const strict = workspace("strict-run", 'sandbox = "required"\n');
    const r = await car(["run", proposal("optout"), "--tools", tools(strict), "--db", ":memory:", "--no-sandbox"], strict);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--no-sandbox: a policy requires the sandbox");
  });
});

describe("car run's module tools", () => {
  it("run in car's own process, which no sandbox holds: said when the sandbox is wanted, refused when required", async () => {
    const module = join(repo, "tools.mjs");
    writeFileSync(module, 'export const lookup = () => ({ outcome: "in process" });\n');
    const wanted = await car(["run", proposal("module"), "--tools", module, "--json", "--db", ":memory:"], repo);
    expect(wanted.code, wanted.stderr).toBe(0);
    expect(wanted.stderr).toContain("car: tools from a module run inside car's own process, which no sandbox holds");
    const required = await car(["run", proposal("module-required"), "--tools", module, "--json", "--db", ":memory:", "--sandbox"], repo);
    expect(required.code).toBe(1);
    expect(required.stderr).toContain("the sandbox is required and cannot start here: tools from a module run inside car's own process");
    expect(required.stdout).toBe("");
  });
});

describe("where the sandbox cannot start", () => {
  const marker = () => join(root, `ran-${Math.random().toString(36).slice(2)}`);

  it("says so on stderr and runs the command judged by the reader alone, when it is only wanted", async () => {
    const file = marker();
    const r = await car(["sandbox-exec", "--if-available", "-c", `touch ${file}; echo ran`], repo, { PATH: noBwrapPath });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "car: the sandbox cannot start here (bubblewrap (bwrap) not installed); commands run without it, judged by the policy reader alone",
    );
    expect(r.stdout).toBe("ran\n");
    expect(existsSync(file)).toBe(true);
    const run = await car(["run", proposal("fallback"), "--tools", tools(repo), "--json", "--db", ":memory:"], repo, { PATH: noBwrapPath });
    expect(run.stderr).toContain("the sandbox cannot start here (bubblewrap (bwrap) not installed)");
    expect(run.code, run.stderr).toBe(0);
  });

  it("falls back, or refuses, the same way when bubblewrap is there but the kernel refuses its namespaces", async () => {
    // This container allows user namespaces, so a bwrap that answers as bwrap does where they are refused stands in for such a kernel.
    const fake = join(root, "fake-bwrap");
    mkdirSync(fake, { recursive: true });
    writeFileSync(join(fake, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n", { mode: 0o755 });
    const env = { PATH: `${fake}:${process.env["PATH"]}` };
    const wanted = await car(["sandbox-exec", "--if-available", "-c", "echo ran"], repo, env);
    expect(wanted.stderr).toContain(
      "car: the sandbox cannot start here (bubblewrap cannot create the sandbox's namespaces here (bwrap: No permissions to creating new namespace))",
    );
    expect(wanted.stdout).toBe("ran\n");
    const file = marker();
    const required = await car(["sandbox-exec", "-c", `touch ${file}`], repo, env);
    expect(required.code).toBe(1);
    expect(required.stderr).toContain("the sandbox is required and cannot start here: bubblewrap cannot create the sandbox's namespaces here");
    expect(existsSync(file)).toBe(false);
  });

  it("runs nothing and fails with a typed error when the sandbox is required", async () => {
    const strict = workspace("strict-exec", 'sandbox = "required"\n');
    for (const [args, cwd] of [
      [["sandbox-exec", "-c"], repo],
      [["sandbox-exec", "--if-available", "-c"], strict],
    ] as const) {
      const file = marker();
      const r = await car([...args, `touch ${file}`], cwd, { PATH: noBwrapPath });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("the sandbox is required and cannot start here: bubblewrap (bwrap) not installed");
      expect(existsSync(file)).toBe(false);
    }
    const run = await car(["run", proposal("required"), "--tools", tools(repo), "--json", "--db", ":memory:", "--sandbox"], repo, {
      PATH: noBwrapPath,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the sandbox is required and cannot start here");
    expect(run.stdout).toBe("");
  });
});

/** A proposal calling the probe tool: to the unlisted host directly, and (with `listed`) to the allowlisted one through the proxy. */
function proposal(name: string, listed = false): string {
  const file = join(root, `${name}.json`);
  const actions = [{ id: "evade", type: "tool_call", tool: "lookup", parameters: { how: "direct", port: String(unlisted.port) } }];
  if (listed) actions.push({ id: "listed", type: "tool_call", tool: "lookup", parameters: { how: "proxy", port: String(allowed.port) } });
  writeFileSync(file, JSON.stringify({ id: name, actions }));
  return file;
}

/** The probe as a tools.json program tool, in `dir`. */
function tools(dir: string): string {
  const file = join(dir, "tools.json");
  writeFileSync(file, JSON.stringify({ lookup: { command: [process.execPath, "./probe.mjs", "tool"] } }));
  return file;
}
