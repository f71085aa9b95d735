/**
 * `car daemon` (the reference's name for `car serve`) and the original
 * server's flags as real processes: the token read from a private file that
 * is then gone, the database put where `--journal-dir` says, and every flag
 * that cannot be honoured refused with exit 2 and a reason — never ignored.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAR_NODE_ARGS, runCar } from "./run-car.ts";
import { TestClient } from "../../../packages/car-server/test/test-client.ts";

let root: string;
let home: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "car-serve-flags-"));
  home = join(root, "home");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let files = 0;
function tokenFile(text: string, mode: number): string {
  const path = join(root, `token-${files++}`);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

interface Started {
  child: ChildProcess;
  stdout: string;
  url: string;
}

/** Starts `car <command> --port 0 …args` and resolves once it says where it listens (with its token line). */
function start(command: string, args: string[], env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, [...CAR_NODE_ARGS, command, "--port", "0", ...args], {
    env: { ...(process.env as Record<string, string>), CAR_HOME: home, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      const m = /listening on (ws:\/\/\S+)\n(auth token: \S+|auth: off)/.exec(stdout);
      if (m) resolve({ child, stdout, url: m[1]! });
    });
    child.once("exit", (code) => reject(new Error(`car ${command} exited early with ${code}: ${stderr}`)));
  });
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((done) => child.once("exit", done));
  child.kill("SIGTERM");
  return exited;
}

describe("car daemon", () => {
  it("is car serve: the same help, and it serves", async () => {
    const help = await runCar(["daemon", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--auth-token-file <FILE>");
    expect(help.stdout).toBe((await runCar(["serve", "--help"])).stdout);
    const overview = await runCar(["--help"]);
    expect(overview.stdout).toMatch(/daemon\s+Alias of car serve/);
    const bad = await runCar(["daemon", "--port", "x"], { env: { CAR_HOME: home } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--port must be an integer");
  });
});

describe("--auth-token-file / CAR_AUTH_TOKEN_FILE", () => {
  it("takes the token from a private file, deletes the file, and admits a client holding that token", async () => {
    const file = tokenFile("from-a-file-0123456789\n", 0o600);
    const server = await start("daemon", ["--auth-token-file", file, "--db", ":memory:"]);
    try {
      expect(server.stdout).toContain("auth token: from-a-file-0123456789");
      expect(existsSync(file)).toBe(false);
      const client = await TestClient.open(server.url, "from-a-file-0123456789");
      expect(await client.result("state.get", { key: "x" })).toBeNull();
      await client.close();
    } finally {
      expect(await stop(server.child)).toBe(0);
    }
  });

  it("reads CAR_AUTH_TOKEN_FILE the same way", async () => {
    const file = tokenFile("env-token-abc", 0o400);
    const server = await start("serve", ["--db", ":memory:"], { CAR_AUTH_TOKEN_FILE: file });
    try {
      expect(server.stdout).toContain("auth token: env-token-abc");
      expect(existsSync(file)).toBe(false);
    } finally {
      await stop(server.child);
    }
  });

  it("refuses a file others can read, an empty file, and a second source of the token: exit 2, the file kept", async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["--auth-token-file", tokenFile("t0k3n", 0o644)], {}, /mode 644 lets others read or change the token; .*chmod 600/],
      [["--auth-token-file", tokenFile("\n", 0o600)], {}, /the file is empty/],
      [["--auth-token-file", tokenFile("t0k3n", 0o600), "--token", "other"], {}, /--auth-token-file and --token both give the token/],
      [["--auth-token-file", tokenFile("t0k3n", 0o600), "--no-auth"], {}, /--auth-token-file and --no-auth contradict/],
      [[], { CAR_AUTH_TOKEN_FILE: tokenFile("t0k3n", 0o600), CAR_AUTH_TOKEN: "x" }, /CAR_AUTH_TOKEN_FILE and CAR_AUTH_TOKEN both give the token/],
    ];
    for (const [args, env, message] of cases) {
      const r = await runCar(["serve", "--port", "0", ...args], { env: { CAR_HOME: home, ...env } });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe("");
      const file = args[1] ?? env["CAR_AUTH_TOKEN_FILE"]!;
      expect(existsSync(file)).toBe(true);
    }
  });
});

describe("--journal-dir", () => {
  it("puts the database in DIR (~/.car/ read as CAR_HOME), and refuses it beside --db", async () => {
    const server = await start("serve", ["--journal-dir", "~/.car/journals"]);
    try {
      expect(existsSync(join(home, "journals", "car.db"))).toBe(true);
    } finally {
      await stop(server.child);
    }
    const both = await runCar(["serve", "--journal-dir", join(root, "j"), "--db", join(root, "x.db")], { env: { CAR_HOME: home } });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--journal-dir and --db both say where the database is");
  });
});

describe("--no-approvals / CAR_NO_APPROVALS", () => {
  it("is refused with the reason and what to use instead, never accepted and ignored", async () => {
    for (const [args, env] of [
      [["--no-approvals"], {}],
      [[], { CAR_NO_APPROVALS: "1" }],
    ] as [string[], Record<string, string>][]) {
      const r = await runCar(["daemon", "--port", "0", ...args], { env: { CAR_HOME: home, ...env } });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/(--no-approvals|CAR_NO_APPROVALS=1) is not offered: every session is gated .*\(car approvals default trusting\)/);
      expect(r.stdout).toBe("");
    }
  });
});
