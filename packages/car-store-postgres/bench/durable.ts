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
 * A second floor, for SQLite: the row floor — the run's own event rows
 * (data canonical, hashes known) written again in those transactions,
 * plus SHA-256 of every body. It is what storing every event in the chain
 * costs with this schema whatever the engine does; when it is above 2× the
 * goal is out of reach and the verdict says so. Beside the wall-clock
 * ratios, CPU time (user + system of this process) and its ratio: on a
 * shared machine the wall clock includes waiting for a core, the CPU time
 * does not (neither includes waiting for the disk's sync); the row floor's
 * CPU ratio follows the verdict.
 *
 * `BENCH_ACTIONS` (default 10000), `BENCH_REPEATS` (default 2; best of),
 * `BENCH_SHAPES` (e.g. `fan-out,levels`) and `BENCH_STORES` (e.g.
 * `sqlite full,postgres`; `none` skips the small proposals) override. Run
 * with `npm run bench:durable`.
 */
import { execSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ActionProposalInput } from "@car/ir";
import pg from "pg";
import { Runtime, type RuntimeStore } from "@car/engine";
import { sha256Hex } from "@car/engine/durable";
import { sqlite } from "@car/store-sqlite";
import { COLUMN_COUNT, INSERT_COLUMNS, SELECT_COLUMNS, chainAnchor, eventFromRow, openDatabase } from "@car/store-sqlite/internal";
import type { EventRow } from "@car/store-sqlite/internal";
import { gc, usPer } from "@car/test-kit/measure";
import { proposalOf, tools } from "@car/test-kit/shapes";
import type { Shape } from "@car/test-kit/shapes";
import { postgres } from "../src/index.ts";
import { postgresBinDir, startPostgresCluster } from "@car/test-kit/postgres-cluster";
import type { PostgresCluster } from "@car/test-kit/postgres-cluster";
import { withoutIntents } from "@car/test-kit/without-intents";

const N = Number(process.env["BENCH_ACTIONS"] ?? 10_000);
const REPEATS = Number(process.env["BENCH_REPEATS"] ?? 2);
const SMALL = 10;
const SHAPES = (process.env["BENCH_SHAPES"]?.split(",") ?? ["fan-out", "chain", "levels"]) as Shape[];
const STORES = process.env["BENCH_STORES"]?.split(",");
const wanted = (label: string): boolean => STORES === undefined || STORES.includes(label);

interface Backend {
  label: string;
  open(): Promise<RuntimeStore>;
  /** SQLite: the file the last `open` created, and its `synchronous` (for the row floor). */
  lastFile?: () => string;
  synchronous?: "full" | "normal";
  /** Milliseconds of one one-row write transaction on this kind of store (the floor's unit). */
  commitMs: number;
  /** The begin record has a transaction of its own (PostgreSQL), rather than riding with the first intents or the commit (SQLite). */
  beginAlone: boolean;
}

/** Wall and CPU (user + system) milliseconds. */
interface Timing {
  wall: number;
  cpu: number;
}

/** Best wall time (and best CPU time) of running `proposals` one after another on a fresh runtime over `open()`. */
async function timeRuns(open: () => Promise<RuntimeStore>, proposals: () => ActionProposalInput[], repeats: number): Promise<Timing> {
  const best = { wall: Infinity, cpu: Infinity };
  for (let r = 0; r < repeats; r++) {
    const rt = new Runtime({ store: await open() });
    rt.registerTool("noop", tools.async);
    const batch = proposals();
    gc?.();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (const p of batch) {
      const result = await rt.executeProposal(p);
      if (result.cost.actions_executed !== p.actions.length) throw new Error(`${p.id}: only ${result.cost.actions_executed} executed`);
    }
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    best.wall = Math.min(best.wall, wall);
    best.cpu = Math.min(best.cpu, (c.user + c.system) / 1000);
    await rt.close();
  }
  return best;
}

/**
 * The storage floor of a SQLite run: the rows it wrote to `events` (read
 * back from its file, as stored: data canonical, hashes known), written
 * again into a fresh database of the same schema in `transactions`
 * IMMEDIATE transactions — the intent writes and the commit the guarantees
 * require, each a multi-row insert as the log does it — plus SHA-256 of
 * every event's canonical text (the chain link no store can skip; the texts
 * are rebuilt before the clock starts). What remains above it is the
 * engine's own per-event work (building the canonical text, binding,
 * buffering). Best of `repeats`, wall and CPU ms.
 */
function sqliteRowFloor(from: string, into: () => string, synchronous: "full" | "normal", transactions: number, repeats = 1): Timing {
  const source = openDatabase(from, { readonly: true });
  const anchor = chainAnchor(source);
  const stored = source.prepare(`SELECT ${SELECT_COLUMNS} FROM events ORDER BY seq`).all() as EventRow[];
  source.close();
  const texts = stored.map((row) => eventFromRow(row, anchor, true).stored!);
  const rows = stored.map((row) => [row.seq, row.kind, row.proposal_id, row.action_id, row.ts, row.stamp, row.data, row.hash, row.mac]);
  const batch = 64;
  const columns = `INSERT INTO events (${INSERT_COLUMNS}) VALUES `;
  const row = `(${Array.from({ length: COLUMN_COUNT }, () => "?").join(", ")})`;
  const best = { wall: Infinity, cpu: Infinity };
  for (let r = 0; r < repeats; r++) {
    const db = openDatabase(into(), { synchronous });
    const one = db.prepare(columns + row);
    const many = db.prepare(columns + Array.from({ length: batch }, () => row).join(", "));
    const head = db.prepare("INSERT INTO chain_head (id, seq, hash) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash");
    const write = db.transaction((from: number, to: number) => {
      let i = from;
      for (; i + batch <= to; i += batch) many.run(rows.slice(i, i + batch).flat());
      for (; i < to; i++) one.run(rows[i]!);
      head.run(rows[to - 1]![0], (rows[to - 1]![7] as Buffer).toString("hex"));
    });
    const per = Math.ceil(rows.length / transactions);
    gc?.();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let chained = 0;
    for (const text of texts) chained += sha256Hex(text).length;
    for (let i = 0; i < rows.length; i += per) write.immediate(i, Math.min(rows.length, i + per));
    best.wall = Math.min(best.wall, performance.now() - t0);
    const c = process.cpuUsage(c0);
    best.cpu = Math.min(best.cpu, (c.user + c.system) / 1000);
    db.close();
    if (chained === 0) throw new Error("no rows");
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
    if (!wanted(`sqlite ${synchronous}`)) continue;
    let last = "";
    backends.push({
      label: `sqlite ${synchronous}`,
      open: async () => sqlite((last = join(dir, `b${files++}.db`)), { synchronous }),
      lastFile: () => last,
      synchronous,
      commitMs: sqliteCommitMs(join(dir, `probe${files++}.db`), synchronous),
      beginAlone: false,
    });
  }
  if (!wanted("postgres")) {
    // Not asked for.
  } else if (postgresBinDir() !== undefined) {
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
  const header = `${"shape".padEnd(8)}  ${"store".padEnd(14)}  ${"intents".padEnd(7)}  ${"µs/action".padStart(9)}  ${"ratio".padStart(7)}  ${"cpu µs".padStart(7)}  ${"cpu ratio".padStart(9)}  ${"tx floor".padStart(8)}  ${"row floor".padStart(9)}  vs 2×`;

  const times = (x: number): string => `${x.toFixed(2)}×`;
  const rows = async (
    label: string,
    mem: Timing,
    backendRun: (b: Backend, intents: boolean) => Promise<Timing>,
    floorTx: (b: Backend, intents: boolean) => number,
    perActions: number,
  ): Promise<void> => {
    const memUs = usPer(mem.wall, perActions);
    const memCpu = usPer(mem.cpu, perActions);
    console.log(
      `${label.padEnd(8)}  ${"in-memory".padEnd(14)}  ${"".padEnd(7)}  ${memUs.toFixed(1).padStart(9)}  ${"1.00×".padStart(7)}  ${memCpu.toFixed(1).padStart(7)}  ${"1.00×".padStart(9)}`,
    );
    for (const b of backends) {
      for (const intents of [true, false]) {
        const run = await backendRun(b, intents);
        const us = usPer(run.wall, perActions);
        // The transaction floor: the required transactions alone (one-row commits), on top of the in-memory engine.
        const txFloor = (memUs + usPer(floorTx(b, intents) * b.commitMs, perActions)) / memUs;
        // The row floor (SQLite): the run's own rows and hashes written in those transactions, on top of the in-memory engine.
        let rowFloor: number | undefined;
        let rowFloorCpu = "";
        if (b.lastFile !== undefined) {
          const rowMs = sqliteRowFloor(b.lastFile(), () => join(dir, `f${files++}.db`), b.synchronous!, floorTx(b, intents));
          rowFloor = (memUs + usPer(rowMs.wall, perActions)) / memUs;
          rowFloorCpu = ` (cpu ${times((memCpu + usPer(rowMs.cpu, perActions)) / memCpu)})`;
        }
        const floor = Math.max(txFloor, rowFloor ?? 0);
        const verdict = us / memUs <= 2 ? "pass" : floor > 2 ? "miss (floor > 2×)" : "miss";
        console.log(
          `${label.padEnd(8)}  ${b.label.padEnd(14)}  ${(intents ? "yes" : "no").padEnd(7)}  ${us.toFixed(1).padStart(9)}  ${times(us / memUs).padStart(7)}  ${usPer(run.cpu, perActions).toFixed(1).padStart(7)}  ${times(usPer(run.cpu, perActions) / memCpu).padStart(9)}  ${times(txFloor).padStart(8)}  ${(rowFloor === undefined ? "" : times(rowFloor)).padStart(9)}  ${verdict}${rowFloorCpu}`,
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
    for (const shape of SHAPES) await timeRuns(b.open, () => [{ id: "w", ...proposalOf(shape, 400) }], 1);

  console.log(header);
  for (const shape of SHAPES) {
    const one = () => [{ id: "p", ...proposalOf(shape, N) }];
    const mem = await timeRuns(memory, one, REPEATS + 1);
    await rows(
      shape,
      mem,
      (b, intents) => timeRuns(storeOf(b, intents), one, REPEATS),
      (b, intents) => transactions(shape, N, intents, b.beginAlone),
      N,
    );
  }

  if (STORES?.includes("none") === true) process.exit(0);
  console.log(`\n${N / SMALL} proposals of ${SMALL} independent actions each (fan-out):`);
  console.log(header);
  const many = () => Array.from({ length: N / SMALL }, (_, p) => ({ id: `p${p}`, ...proposalOf("fan-out", SMALL) }));
  const mem = await timeRuns(memory, many, REPEATS + 1);
  await rows(
    `${SMALL}/prop`,
    mem,
    (b, intents) => timeRuns(storeOf(b, intents), many, REPEATS),
    (b, intents) => (N / SMALL) * transactions("fan-out", SMALL, intents, b.beginAlone),
    N,
  );
} finally {
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}
