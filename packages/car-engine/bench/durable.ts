/**
 * The durable stores against the in-memory engine, measured in the same run:
 * 10k-action proposals of async no-op tool calls (`async () => ({ ok: true })`,
 * what real tools look like) in the three shapes — fan-out, chain, and
 * levels (100 × 100) — on SQLite (`synchronous` full, the default, and
 * normal) and, when Debian's postgresql package is installed, on a
 * throwaway PostgreSQL cluster; each store with its dispatch intents (as
 * shipped) and without them (the same store, its log's `persist` hidden), so
 * the intents' cost is the difference of two rows of one run. Then 1 000
 * proposals of 10 actions each, where the per-proposal transactions weigh
 * most.
 *
 * Beside each ratio: the floor, what the write transactions the guarantees
 * require cost by themselves — one intent write per scheduling level (a
 * chain has one per action; the intents of one level share one, and on
 * SQLite the begin record rides with the first), the commit, and on
 * PostgreSQL the begin's own round trip — each timed as a one-row commit
 * on the same kind of store in this run, added to the in-memory time. With
 * `synchronous = full` that is one sync to disk each, which no engine change
 * removes.
 *
 * `BENCH_ACTIONS` (default 10000) and `BENCH_REPEATS` (default 2; best of)
 * override. Run with `npm run bench:durable`.
 */
import { execSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ActionProposalInput } from "@car/ir";
import pg from "pg";
import { Runtime } from "../src/index.ts";
import type { RuntimeStore } from "../src/index.ts";
import { postgres } from "../src/backends/postgres/index.ts";
import { openDatabase } from "../src/backends/sqlite/schema.ts";
import { sqlite } from "../src/backends/sqlite/index.ts";
import { postgresBinDir, startPostgresCluster } from "../test/support/postgres-cluster.ts";
import type { PostgresCluster } from "../test/support/postgres-cluster.ts";
import { withoutIntents } from "../test/support/without-intents.ts";
import { gc, usPer } from "./measure.ts";
import { proposalOf, tools } from "./shapes.ts";
import type { Shape } from "./shapes.ts";

const N = Number(process.env["BENCH_ACTIONS"] ?? 10_000);
const REPEATS = Number(process.env["BENCH_REPEATS"] ?? 2);
const SMALL = 10;

interface Backend {
  label: string;
  open(): Promise<RuntimeStore>;
  /** Milliseconds of one one-row write transaction on this kind of store (the floor's unit). */
  commitMs: number;
  /** The begin record has a transaction of its own (PostgreSQL), rather than riding with the first intents or the commit (SQLite). */
  beginAlone: boolean;
}

/** Best wall time of running `proposals` one after another on a fresh runtime over `open()`. */
async function timeRuns(open: () => Promise<RuntimeStore>, proposals: () => ActionProposalInput[], repeats: number): Promise<number> {
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    const rt = new Runtime({ store: await open() });
    rt.registerTool("noop", tools.async);
    const batch = proposals();
    gc?.();
    const t0 = performance.now();
    for (const p of batch) {
      const result = await rt.executeProposal(p);
      if (result.cost.actions_executed !== p.actions.length) throw new Error(`${p.id}: only ${result.cost.actions_executed} executed`);
    }
    best = Math.min(best, performance.now() - t0);
    await rt.close();
  }
  return best;
}

/** Write transactions a proposal of `shape` needs: one intent write per level and the commit, plus the begin where it is alone. */
function transactions(shape: Shape, n: number, intents: boolean, beginAlone: boolean): number {
  const levels = shape === "fan-out" ? 1 : shape === "chain" ? n : Math.round(n / Math.round(Math.sqrt(n)));
  return 1 + (beginAlone ? 1 : 0) + (intents ? levels : 0);
}

/** Median ms of `count` one-row IMMEDIATE transactions on a fresh SQLite file. */
function sqliteCommitMs(path: string, synchronous: "full" | "normal", count = 200): number {
  const db = openDatabase(path, { synchronous });
  const insert = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
  const one = db.transaction((i: number) => insert.run(`k${i}`, "x".repeat(200)));
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    one.immediate(i);
    times.push(performance.now() - t0);
  }
  db.close();
  return median(times);
}

async function postgresCommitMs(url: string, count = 200): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("CREATE TEMP TABLE probe (k int, v text)");
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await client.query("INSERT INTO probe VALUES ($1, $2)", [i, "x".repeat(200)]);
    times.push(performance.now() - t0);
  }
  await client.end();
  return median(times);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const dir = mkdtempSync(join(tmpdir(), "car-bench-durable-"));
let files = 0;
let cluster: PostgresCluster | undefined;
let databases = 0;

try {
  const backends: Backend[] = [];
  for (const synchronous of ["full", "normal"] as const) {
    backends.push({
      label: `sqlite ${synchronous}`,
      open: async () => sqlite(join(dir, `b${files++}.db`), { synchronous }),
      commitMs: sqliteCommitMs(join(dir, `probe${files++}.db`), synchronous),
      beginAlone: false,
    });
  }
  if (postgresBinDir() !== undefined) {
    cluster = await startPostgresCluster();
    const c = cluster;
    backends.push({
      label: "postgres",
      open: async () => {
        const store = postgres(c.createDatabase(`bench_${++databases}`), { poolSize: 2 });
        await store.ready();
        return store;
      },
      commitMs: await postgresCommitMs(c.url),
      beginAlone: true,
    });
  } else console.log("PostgreSQL is not installed (apt-get install postgresql): its rows are left out");

  const load = execSync("uptime", { encoding: "utf8" }).trim();
  console.log(`${N} actions per proposal, async no-op tool, best of ${REPEATS}; load: ${load}`);
  console.log(`one-row commit (the floor's unit): ${backends.map((b) => `${b.label} ${b.commitMs.toFixed(3)} ms`).join(", ")}\n`);
  const memory = async (): Promise<RuntimeStore> => new Runtime().store;
  const header = `${"shape".padEnd(8)}  ${"store".padEnd(14)}  ${"intents".padEnd(7)}  ${"µs/action".padStart(9)}  ${"ratio".padStart(7)}  ${"floor µs".padStart(9)}  ${"floor ratio".padStart(11)}`;

  const rows = async (
    label: string,
    memUs: number,
    backendUs: (b: Backend, intents: boolean) => Promise<number>,
    floorTx: (b: Backend, intents: boolean) => number,
    perActions: number,
  ): Promise<void> => {
    console.log(`${label.padEnd(8)}  ${"in-memory".padEnd(14)}  ${"".padEnd(7)}  ${memUs.toFixed(1).padStart(9)}  ${"1.00×".padStart(7)}`);
    for (const b of backends) {
      for (const intents of [true, false]) {
        const us = await backendUs(b, intents);
        // The floor: the required transactions alone, on top of the in-memory engine.
        const floorUs = usPer(floorTx(b, intents) * b.commitMs, perActions);
        console.log(
          `${label.padEnd(8)}  ${b.label.padEnd(14)}  ${(intents ? "yes" : "no").padEnd(7)}  ${us.toFixed(1).padStart(9)}  ${`${(us / memUs).toFixed(2)}×`.padStart(7)}  ${floorUs.toFixed(1).padStart(9)}  ${`${((memUs + floorUs) / memUs).toFixed(2)}×`.padStart(11)}`,
        );
      }
    }
  };

  const storeOf = (b: Backend, intents: boolean) => async (): Promise<RuntimeStore> => {
    const store = await b.open();
    return intents ? store : withoutIntents(store);
  };

  // Warm up every path once on a small proposal.
  for (const b of [{ label: "memory", open: memory, commitMs: 0, beginAlone: false }, ...backends])
    for (const shape of ["fan-out", "chain", "levels"] as const) await timeRuns(b.open, () => [{ id: "w", ...proposalOf(shape, 400) }], 1);

  console.log(header);
  for (const shape of ["fan-out", "chain", "levels"] as const) {
    const one = () => [{ id: "p", ...proposalOf(shape, N) }];
    const memUs = usPer(await timeRuns(memory, one, REPEATS + 1), N);
    await rows(
      shape,
      memUs,
      async (b, intents) => usPer(await timeRuns(storeOf(b, intents), one, REPEATS), N),
      (b, intents) => transactions(shape, N, intents, b.beginAlone),
      N,
    );
  }

  console.log(`\n${N / SMALL} proposals of ${SMALL} independent actions each (fan-out):`);
  console.log(header);
  const many = () => Array.from({ length: N / SMALL }, (_, p) => ({ id: `p${p}`, ...proposalOf("fan-out", SMALL) }));
  const memUs = usPer(await timeRuns(memory, many, REPEATS + 1), N);
  await rows(
    `${SMALL}/prop`,
    memUs,
    async (b, intents) => usPer(await timeRuns(storeOf(b, intents), many, REPEATS), N),
    (b, intents) => (N / SMALL) * transactions("fan-out", SMALL, intents, b.beginAlone),
    N,
  );
} finally {
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}
