/**
 * The built hook: `dist/car.mjs policy-check-hook` reaching the separately
 * bundled `hook.mjs` — the file editors actually run. Built here with tsdown
 * into node_modules/.cache (so workspace packages still resolve), then run
 * with plain `node`, no tsx.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const cliDir = fileURLToPath(new URL("..", import.meta.url));
const outDir = join(cliDir, "node_modules", ".cache", "car-cli-test-dist");
let root: string;

function hook(cwd: string, command: string) {
  const payload = JSON.stringify({ session_id: "s", cwd, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command } });
  return spawnSync(process.execPath, [join(outDir, "car.mjs"), "policy-check-hook"], {
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
    expect(readFileSync(join(outDir, "car.mjs"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    const bundle = readFileSync(join(outDir, "hook.mjs"), "utf8");
    const imports = [...bundle.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports.every((m) => m!.startsWith("node:"))).toBe(true);
    // Loaded on first use only (src/lazy-crypto.ts, src/lazy-re2js.ts).
    expect(imports).not.toContain("node:crypto");
    expect(bundle).not.toMatch(/^import .* from "re2js"/m);
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
});
