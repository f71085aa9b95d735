/**
 * Cold start of `car policy-check-hook`, the command an editor runs before
 * every tool call, against the floor of starting Node at all (`node -e 0`).
 * Goal: ≤ 1.3× that floor.
 *
 * Builds the CLI (`dist/`), then spawns each case in interleaved rounds so
 * background load hits every case alike, and reports medians and minimums
 * as ratios of the baseline measured in the same run.
 *
 *   npm run bench              # 40 rounds
 *   npm run bench -- 100       # more rounds
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const cliDir = fileURLToPath(new URL("..", import.meta.url));
const carMjs = join(cliDir, "dist", "car.mjs");
const rounds = Number(process.argv[2] ?? 40);

console.log("building dist/ with tsdown …");
execFileSync("npx", ["tsdown", "--log-level", "warn"], { cwd: cliDir, stdio: "inherit" });

const root = mkdtempSync(join(tmpdir(), "car-bench-"));
const repo = join(root, "repo");
mkdirSync(join(repo, ".git"), { recursive: true });
mkdirSync(join(repo, ".car", "policies"), { recursive: true });
mkdirSync(join(repo, "src", "deep"), { recursive: true });
mkdirSync(join(root, "home"));
writeFileSync(
  join(repo, ".car", "policies", "rules.toml"),
  'deny_tool = ["WebFetch"]\ndeny_keyword = ["rm -rf /", "DROP TABLE"]\n[[allow_tool_param]]\ntool = "deploy"\nparam = "env"\nallow = ["staging"]\n',
);
const payload = (command: string) =>
  JSON.stringify({
    session_id: "bench",
    transcript_path: "/dev/null",
    cwd: join(repo, "src", "deep"),
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command, description: "bench" },
    tool_use_id: "toolu_bench",
  });

interface Case {
  name: string;
  args: string[];
  input: string;
}

const cases: Case[] = [
  { name: "node -e 0 (baseline)", args: ["-e", "0"], input: "" },
  { name: "car policy-check-hook (no decision)", args: [carMjs, "policy-check-hook"], input: payload("git status && ls -la") },
  { name: "car policy-check-hook (deny)", args: [carMjs, "policy-check-hook"], input: payload("rm -rf / --no-preserve-root") },
  { name: "car --version (CLI entry floor)", args: [carMjs, "--version"], input: "" },
];

// Warm the page cache and check each case works before timing.
for (const c of cases) {
  const r = spawnSync(process.execPath, c.args, { input: c.input, env: { ...process.env, CAR_HOME: join(root, "home") } });
  if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr}`);
}

const times = cases.map((): number[] => []);
for (let i = 0; i < rounds; i++) {
  for (const [k, c] of cases.entries()) {
    const start = process.hrtime.bigint();
    spawnSync(process.execPath, c.args, { input: c.input, env: { ...process.env, CAR_HOME: join(root, "home") } });
    times[k]!.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
}
rmSync(root, { recursive: true, force: true });

const median = (t: number[]) => [...t].sort((a, b) => a - b)[t.length >> 1]!;
const min = (t: number[]) => Math.min(...t);
const baseMedian = median(times[0]!);
const baseMin = min(times[0]!);
console.log(`\n${rounds} interleaved rounds, node ${process.version}`);
console.log(`${"case".padEnd(40)} ${"median".padStart(10)} ${"ratio".padStart(7)} ${"min".padStart(10)} ${"ratio".padStart(7)}`);
for (const [k, c] of cases.entries()) {
  const t = times[k]!;
  console.log(
    `${c.name.padEnd(40)} ${`${median(t).toFixed(1)} ms`.padStart(10)} ${`${(median(t) / baseMedian).toFixed(2)}×`.padStart(7)} ${`${min(t).toFixed(1)} ms`.padStart(10)} ${`${(min(t) / baseMin).toFixed(2)}×`.padStart(7)}`,
  );
}
console.log("goal: car policy-check-hook ≤ 1.3× node -e 0");
