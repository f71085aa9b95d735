/**
 * Committed proposals per second on the PostgreSQL store with 1, 2 and 4
 * worker processes, on disjoint keys and with 10% of the keys shared, against
 * the SQLite store in one process, measured in the same run (median of
 * interleaved rounds; BENCH_MS and BENCH_ROUNDS override) on the same
 * workload (`test/fixtures/race-worker.ts`): each proposal
 * reads two counters, adds one to each through a tool and writes them back
 * (6 actions, 2 read-modify-writes). With overlap, each counter a proposal
 * picks is one of 4 shared counters with probability 0.1, else one of the
 * worker's own 50. Aborted proposals (refused commits) are counted apart.
 * The client CPU per committed proposal is printed too: on a small or busy
 * machine the wall-clock rates mostly measure contention for the cores
 * (every worker and the server share them).
 * Run with `npm run bench:postgres` (needs Debian's postgresql package).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { postgresBinDir, startPostgresCluster } from "@car/test-kit/postgres-cluster";

const WORKER = fileURLToPath(new URL("../test/fixtures/race-worker.ts", import.meta.url));
const MS = Number(process.env["BENCH_MS"] ?? 2000);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3);
const SHARED = ["shared/0", "shared/1", "shared/2", "shared/3"];

interface Summary {
  committed: number;
  aborted: number;
  /** CPU time the workers' loops used (the runtimes, not the server). */
  cpu_ms: number;
}

/** Starts `n` workers, lets them all go at once, and sums what they committed and aborted. */
async function measure(n: number, args: Record<string, unknown>): Promise<Summary> {
  const workers = Array.from({ length: n }, (_, i) => {
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", WORKER, JSON.stringify({ ...args, name: `w${i}` })], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const lines = createInterface({ input: child.stdout! });
    const ready = new Promise<void>((resolve) => lines.on("line", (l) => l === "READY" && resolve()));
    const done = new Promise<Summary>((resolve, reject) => {
      lines.on("line", (l) => l.startsWith("DONE ") && resolve(JSON.parse(l.slice(5)) as Summary));
      child.once("exit", (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)));
    });
    return { child, ready, done };
  });
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.child.stdin!.end("GO\n");
  const results = await Promise.all(workers.map((w) => w.done));
  return results.reduce((a, b) => ({ committed: a.committed + b.committed, aborted: a.aborted + b.aborted, cpu_ms: a.cpu_ms + b.cpu_ms }), {
    committed: 0,
    aborted: 0,
    cpu_ms: 0,
  });
}

const perSecond = (s: Summary): number => (s.committed * 1000) / MS;
const fmt = (x: number): string => x.toFixed(0).padStart(6);
/** Client CPU per committed proposal: steadier than wall-clock rates on a shared, loaded machine. */
const cpuPer = (s: Summary): string => (s.cpu_ms / Math.max(1, s.committed)).toFixed(2);

if (postgresBinDir() === undefined) {
  console.log("PostgreSQL is not installed (apt-get install postgresql): nothing to measure");
  process.exit(0);
}
console.log(`${cpus().length} CPUs; ${MS} ms per measurement, ${ROUNDS} rounds; proposals of 6 actions (2 read-modify-writes)\n`);

/** One measured configuration: the SQLite baseline, or PostgreSQL with `workers` processes and an overlap. */
interface Config {
  label: string;
  workers: number;
  overlap: number;
  sqlite: boolean;
  runs: Summary[];
}

const configs: Config[] = [{ label: "SQLite baseline", workers: 1, overlap: 0, sqlite: true, runs: [] }];
for (const [label, overlap] of [
  ["disjoint", 0],
  ["10% shared", 0.1],
] as const)
  for (const workers of [1, 2, 4]) configs.push({ label, workers, overlap, sqlite: false, runs: [] });

const common = { mode: "race", ms: MS, shared: SHARED, ownKeys: 50, report: "summary", tx: "strict" };
const cluster = await startPostgresCluster();
const dir = mkdtempSync(join(tmpdir(), "car-bench-sqlite-"));
try {
  let databases = 0;
  // Rounds interleave the configurations, so a change in the machine's load hits all of them alike; the median run is reported.
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of configs) {
      const url = c.sqlite ? join(dir, `car-${round}.db`) : cluster.createDatabase(`bench_${++databases}`);
      c.runs.push(await measure(c.workers, { ...common, url, overlap: c.overlap, ...(c.sqlite ? { backend: "sqlite" } : {}) }));
    }
  }
} finally {
  cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}

const median = (c: Config): Summary => [...c.runs].sort((a, b) => a.committed - b.committed)[Math.floor(c.runs.length / 2)]!;
const baseline = perSecond(median(configs[0]!));
console.log(
  `baseline: SQLite store, 1 process: ${fmt(baseline)} committed proposals/s, ${cpuPer(median(configs[0]!))} client CPU ms per proposal (median of ${ROUNDS})\n`,
);
console.log("keys         workers  committed/s  aborted/s  vs 1 worker  vs SQLite  client CPU ms/proposal");
let single = 0;
for (const c of configs.slice(1)) {
  const s = median(c);
  const rate = perSecond(s);
  if (c.workers === 1) single = rate;
  console.log(
    `${c.label.padEnd(12)} ${String(c.workers).padStart(7)}  ${fmt(rate).padStart(11)}  ${fmt((s.aborted * 1000) / MS).padStart(9)}  ${(rate / single).toFixed(2).padStart(10)}×  ${(rate / baseline).toFixed(2).padStart(8)}×  ${cpuPer(s).padStart(22)}`,
  );
}
