/**
 * `car verify` on large proposals (issue #18): the built CLI on each of
 * @car/verify's bench shapes at 100k and 1M actions, in every output format,
 * each run a process of its own. Reports its CPU time against the baseline
 * (`JSON.parse` + `parseProposal` of the same text, `parse-baseline.ts`, in a
 * process of its own) and its peak RSS above the baseline's, per action.
 * `car verify` reads and parses the text itself, so its ratio includes one
 * baseline and Node's start; its memory counts the text, the parse, verify
 * and the report writer, minus what the baseline process grew by reading and
 * parsing, and minus `car --version`'s peak RSS (Node and the CLI loaded).
 *
 *   npm run bench:verify                      # 100k and 1M, five shapes, four formats
 *   BENCH_SIZES=100000 BENCH_SHAPES=conflict BENCH_FORMATS=text,json npm run bench:verify
 *
 * Give large rows a heap with `NODE_OPTIONS` (passed to every process); the
 * default heap is what a user gets.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const cliDir = fileURLToPath(new URL("..", import.meta.url));
const carMjs = join(cliDir, "dist", "car.mjs");
const rusage = join(cliDir, "bench", "rusage.mjs");
// The proposal generators are @car/verify's bench shapes, found through its exported package.json.
const verifyDir = dirname(createRequire(import.meta.url).resolve("@car/verify/package.json"));
const SIZES = (process.env["BENCH_SIZES"] ?? "100000,1000000").split(",").map(Number);
const SHAPES = (process.env["BENCH_SHAPES"] ?? "random,chain,fanout,conflict,outputs").split(",");
const FORMATS = (process.env["BENCH_FORMATS"] ?? "text,json,dot,html").split(",");
const GOAL = { ratio: 5, heapKb: 2 } as const;

interface Usage {
  cpu: number;
  maxRssKb: number;
  status: number | null;
  stdout: string;
  /** stderr without the RUSAGE line: empty unless the process failed. */
  errors: string;
}

/** Runs `node --import rusage.mjs …args`, returning its CPU time and peak RSS. */
function run(args: string[]): Usage {
  const child = spawnSync(process.execPath, ["--import", rusage, ...args], { encoding: "utf8", maxBuffer: 1 << 24 });
  const line = child.stderr.split("\n").find((l) => l.startsWith("RUSAGE "));
  if (line === undefined)
    throw new Error(`no resource usage from ${args.join(" ")} (exit ${child.status}, signal ${child.signal}): ${child.stderr.slice(-2000)}`);
  const errors = child.stderr.replace(`${line}\n`, "").trim();
  return { ...(JSON.parse(line.slice(7)) as { cpu: number; maxRssKb: number }), status: child.status, stdout: child.stdout, errors };
}

// The built CLI imports the workspace packages' dist/, so they are built too.
console.log("building @car/cli and the packages it uses …");
execFileSync("npx", ["-y", "pnpm@12.4.2", "--filter", "@car/cli...", "build"], { cwd: cliDir, stdio: ["ignore", "ignore", "inherit"] });
const floorKb = run([carMjs, "--version"]).maxRssKb;
const dir = mkdtempSync(join(tmpdir(), "car-verify-scale-"));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
console.log(
  `car --version peak RSS ${(floorKb / 1024).toFixed(0)} MB; CPU ms; ratio = car verify CPU / baseline CPU; KB/action = peak RSS above the baseline's growth and the CLI's floor`,
);
console.log("shape      n         baseline | format  car verify (ratio)       KB/action  exit | load");
try {
  for (const shape of SHAPES) {
    for (const n of SIZES) {
      const file = join(dir, `${shape}-${n}.json`);
      execFileSync(process.execPath, ["--import", "tsx", join(verifyDir, "bench", "write-proposal.ts"), shape, String(n), file], { stdio: "inherit" });
      const baseRun = run(["--conditions=source", "--import", "tsx", join(cliDir, "bench", "parse-baseline.ts"), file]);
      const base = JSON.parse(
        baseRun.stdout
          .split("\n")
          .find((l) => l.startsWith("BASE "))!
          .slice(5),
      ) as { cpu: number; startRssKb: number };
      const parseGrowthKb = baseRun.maxRssKb - base.startRssKb;
      for (const format of FORMATS) {
        const u = run([carMjs, "verify", file, "--format", format, "-o", join(dir, `out.${format}`)]);
        // Exit 1 is also a failed verification (these shapes have findings), so anything on stderr is the failure sign.
        if ((u.status !== 0 && u.status !== 1) || u.errors !== "")
          throw new Error(`car verify ${shape} ${n} --format ${format} exited ${u.status}: ${u.errors.slice(-2000)}`);
        const ratio = u.cpu / base.cpu;
        const kb = (u.maxRssKb - floorKb - parseGrowthKb) / n;
        console.log(
          `${shape.padEnd(9)} ${String(n).padStart(8)}  ${base.cpu.toFixed(0).padStart(7)} | ${format.padEnd(6)} ${u.cpu.toFixed(0).padStart(7)} (${ratio.toFixed(2)}x ${ratio <= GOAL.ratio ? "pass" : "MISS"})  ${kb.toFixed(2).padStart(6)} ${kb <= GOAL.heapKb ? "pass" : "MISS"}  ${u.status} | ${load()}`,
        );
      }
      rmSync(file);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
