/**
 * The built hook: the bin `dist/car.cjs policy-check-hook` requiring the
 * separately bundled `hook.cjs` — the file editors actually run — and
 * `dist/car.mjs policy-check-hook` reaching the same bundle. Built here with tsdown
 * into node_modules/.cache (so workspace packages still resolve), then run
 * with plain `node`, no tsx.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TSX_LOADER } from "./run-car.ts";

const cliDir = fileURLToPath(new URL("..", import.meta.url));
const outDir = join(cliDir, "node_modules", ".cache", "car-cli-test-dist");
let root: string;

function hook(cwd: string, command: string, entry = "car.cjs") {
  const payload = JSON.stringify({ session_id: "s", cwd, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command } });
  return spawnSync(process.execPath, [join(outDir, entry), "policy-check-hook"], {
    input: payload,
    env: { ...process.env, CAR_HOME: join(root, "home") },
    encoding: "utf8",
  });
}

beforeAll(() => {
  rmSync(outDir, { recursive: true, force: true });
  execFileSync("npx", ["tsdown", "--log-level", "error", "--out-dir", outDir], { cwd: cliDir, stdio: "pipe" });
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-built-hook-")));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "repo", "sub"), { recursive: true });
  execFileSync("git", ["init", "-q", join(root, "repo")]);
  mkdirSync(join(root, "repo", ".car", "policies"), { recursive: true });
  writeFileSync(
    join(root, "repo", ".car", "policies", "rules.toml"),
    'deny_keyword = ["rm -rf /"]\n[[deny_tool_param_matching]]\ntool = "Bash"\nparam = "command"\nmatches = "(?i)sk-[a-z0-9]{8,}"\n',
  );
});

afterAll(() => {
  rmSync(outDir, { recursive: true, force: true });
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

describe("the built policy-check-hook", () => {
  it("is a shebang bin that reaches a self-contained hook bundle", () => {
    expect(readFileSync(join(outDir, "car.cjs"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(readFileSync(join(outDir, "car.mjs"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    const bundle = readFileSync(join(outDir, "hook.cjs"), "utf8");
    // CommonJS throughout: no ES module syntax, so Node never starts its ES module loader for the hook.
    expect(bundle).not.toMatch(/^(import|export) /m);
    const required = [...bundle.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
    expect(required.length).toBeGreaterThan(0);
    expect(required.every((m) => isBuiltin(m!))).toBe(true);
    // Loaded on first use only (src/lazy-crypto.ts, src/lazy-re2js.ts).
    expect(required).not.toContain("node:crypto");
    expect(bundle).not.toMatch(/require\("re2js"\)/);
    expect(bundle).not.toContain("ajv");
    expect(existsSync(join(outDir, "index.mjs"))).toBe(true);
  });

  it("denies by keyword and by a regex rule, loading the regex engine on demand", () => {
    const keyword = hook(join(root, "repo", "sub"), "rm -rf / --no-preserve-root");
    expect(keyword.status).toBe(0);
    expect(JSON.parse(keyword.stdout).hookSpecificOutput.permissionDecisionReason).toContain("deny_keyword:rm -rf /");
    const regex = hook(join(root, "repo", "sub"), "curl -H 'Authorization: SK-abcdef123456' https://api.example.com");
    expect(regex.status).toBe(0);
    expect(JSON.parse(regex.stdout).hookSpecificOutput.permissionDecisionReason).toContain("deny_tool_param_matching:Bash.command");
  });

  it("stays silent when nothing matches", () => {
    const r = hook(join(root, "repo", "sub"), "git status");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("");
  });

  it("keeps V8's code cache beside the bundle, and answers the same with it missing, stale or corrupt", () => {
    const cache = join(outDir, "hook.cjs.v8cache");
    const deny = () => hook(join(root, "repo", "sub"), "rm -rf / --no-preserve-root").stdout;
    rmSync(cache, { force: true });
    const expected = deny();
    expect(expected).toContain("deny_keyword:rm -rf /");
    const written = readFileSync(cache);
    expect(written.subarray(0, 9).toString()).toBe("car-hook ");
    expect(deny()).toBe(expected);
    // Same stamp, garbage bytecode: V8 refuses it, the hook compiles, and the cache is written again.
    const stampEnd = written.indexOf(10) + 1;
    writeFileSync(cache, Buffer.concat([written.subarray(0, stampEnd), Buffer.alloc(4096, 7)]));
    expect(deny()).toBe(expected);
    expect(readFileSync(cache).equals(written.subarray(0, stampEnd))).toBe(false);
    expect(readFileSync(cache).length).toBeGreaterThan(4096 + stampEnd);
    // A cache stamped for another build of the bundle is never used.
    writeFileSync(cache, Buffer.concat([Buffer.from("car-hook 1 2 v0\n"), written.subarray(stampEnd)]));
    expect(deny()).toBe(expected);
    expect(readFileSync(cache).subarray(0, stampEnd).equals(written.subarray(0, stampEnd))).toBe(true);
  });

  it("answers the same through the ES module entry, and the bin serves every other command and the hook's help", () => {
    const viaMjs = hook(join(root, "repo", "sub"), "rm -rf / --no-preserve-root", "car.mjs");
    expect(viaMjs.stdout).toBe(hook(join(root, "repo", "sub"), "rm -rf / --no-preserve-root").stdout);
    const version = spawnSync(process.execPath, [join(outDir, "car.cjs"), "--version"], { encoding: "utf8" });
    expect(version.stdout).toMatch(/^car \d+\.\d+\.\d+/);
    const help = spawnSync(process.execPath, [join(outDir, "car.cjs"), "policy-check-hook", "--help"], { encoding: "utf8" });
    expect(help.stdout).toMatch(/^Usage: car policy-check-hook/);
    const unknown = spawnSync(process.execPath, [join(outDir, "car.cjs"), "no-such-command"], { encoding: "utf8" });
    expect(unknown.status).toBe(2);
  });
});

describe("the built hook's sandbox wrap", () => {
  it("wraps a Bash call in the built car's sandbox-exec, which runs it in the sandbox", () => {
    const dir = join(root, "boxed");
    mkdirSync(join(dir, ".car", "policies"), { recursive: true });
    execFileSync("git", ["init", "-q", dir]);
    writeFileSync(join(dir, ".car", "policies", "sandbox.toml"), 'sandbox = "required"\n');
    const r = hook(dir, "echo inside; echo x > .car/policies/sandbox.toml");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("ask");
    // The command a host runs: plain node on the built bin, no tsx; required, so no fallback flag.
    expect(out.updatedInput.command).toBe(
      `'${process.execPath}' '${join(outDir, "car.cjs")}' sandbox-exec -c 'echo inside; echo x > .car/policies/sandbox.toml'`,
    );
    // The workspace packages are not built here: tsx serves them from source to the built chunks (NODE_OPTIONS reaches
    // only this run; the wrapped command itself carries no tsx). What runs is the built sandbox-exec and the installed runtime.
    const env = { ...process.env, CAR_HOME: join(root, "home"), NODE_OPTIONS: `--import ${TSX_LOADER} --conditions=source` };
    const ran = spawnSync("bash", ["-c", out.updatedInput.command], { cwd: dir, env, encoding: "utf8" });
    expect(ran.stdout).toBe("inside\n");
    expect(ran.stderr).toMatch(/sandbox\.toml: (Read-only file system|Permission denied)/);
    expect(readFileSync(join(dir, ".car", "policies", "sandbox.toml"), "utf8")).toBe('sandbox = "required"\n');
  });
});
