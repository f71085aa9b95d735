/**
 * verify / simulate / transactionCheck on every proposal shape (random DAG,
 * long chain, wide fan-out, conflict-heavy, `$id.output` chains) at 10k and
 * 100k actions, and 1M with `BENCH_1M=1` (heavy: minutes and several GB;
 * `BENCH_SIZES` / `BENCH_SHAPES` pick rows; give 1M rows a larger heap,
 * `NODE_OPTIONS=--max-old-space-size=12288`, or GC thrashes near the limit).
 * Every number is against a baseline measured in the same run: JSON.parse
 * alone, and JSON.parse + parseProposal of the same text (goal: each check
 * ≤ 5× that; growth ≤ 12× per 10× in size; ≤ 2 KB of heap per action above
 * the parsed proposal). verify runs on both paths: TypeScript (CAR_NATIVE off)
 * and with every @car/native kernel forced on (CAR_NATIVE=always), when loaded.
 */
import { loadavg } from "node:os";
import { parseProposal } from "@car/ir";
import { nativeStatus, setNativeMode } from "@car/native";
import { simulate, transactionCheck, verify } from "../src/index.ts";
import { allPairsConflicts } from "./all-pairs.ts";
import { SHAPES, type Shape } from "./generate.ts";
import { runKernelBench } from "./kernels.ts";
import { heapPer, type Timing, time } from "./timing.ts";

/** `BENCH_SIZES=100000,1000000` and `BENCH_SHAPES=conflict,chain` pick rows (a 1M row takes minutes). */
const SIZES = process.env["BENCH_SIZES"]?.split(",").map(Number) ?? (process.env["BENCH_1M"] === "1" ? [10_000, 100_000, 1_000_000] : [10_000, 100_000]);
const SHAPE_LIST = (process.env["BENCH_SHAPES"]?.split(",") ?? Object.keys(SHAPES)) as Shape[];
/** `BENCH_NATIVE=0` leaves out the verify-with-native-kernels column, `BENCH_KERNELS=0` the kernel table (one shape per process at 1M). */
const WITH_NATIVE = process.env["BENCH_NATIVE"] !== "0";
const runsFor = (n: number) => (n >= 1_000_000 ? 1 : n >= 100_000 ? 2 : 7);
/** The goals the issue sets: growth per 10× in size, time against the baseline, heap per action. */
const GOAL = { growth: 12, ratio: 5, heapKb: 2 } as const;
const loadNow = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

interface Row {
  shape: Shape;
  n: number;
  parse: Timing;
  base: Timing;
  verifyTs: Timing;
  verifyNative: Timing;
  simulate: Timing;
  tx: Timing;
  heapAfter: number;
  heapRetained: number;
  load: string;
}

const f0 = (x: number) => x.toFixed(0).padStart(6);
const r2 = (x: number) => `${x.toFixed(2)}x`;
const rows: Row[] = [];
const status = nativeStatus();
console.log(`@car/native: ${status.available ? "loaded" : "not loaded"} (${status.reason}); load ${loadNow()}`);
console.log("times in ms, CPU time (fastest run); ratios against JSON.parse + parseProposal of the same text\n");
console.log(
  "shape      n        JSON.parse  +parseProposal | verify TS (ratio)  verify native (ratio, TS/native) | simulate (ratio) | transactionCheck (ratio) | heap KB/action after / retained | load (1/5/15 min)",
);

for (const shape of SHAPE_LIST) {
  for (const n of SIZES) {
    let text: string | undefined = SHAPES[shape](n);
    const runs = runsFor(n);
    const parse = time(runs, () => JSON.parse(text!) as unknown);
    const base = time(runs, () => parseProposal(JSON.parse(text!)));
    text = undefined;
    const proposal = base.value;
    setNativeMode("off");
    // One run is both timed and weighed when a row gets one run (1M): a verify there takes a minute.
    const heap = heapPer(n, () => time(1, () => verify(proposal)));
    const verifyTs = runs === 1 ? heap.value : time(runs, () => verify(proposal));
    setNativeMode("always");
    const verifyNative = WITH_NATIVE ? time(runs, () => verify(proposal)) : { wall: Number.NaN, cpu: Number.NaN, value: verifyTs.value };
    setNativeMode("auto");
    const sim = time(runs, () => simulate(proposal));
    const tx = time(runs, () => transactionCheck(proposal));
    if (shape === "random" && n === 10_000) {
      const ref = allPairsConflicts(proposal);
      if (ref !== verifyTs.value.conflicts.length) throw new Error(`all-pairs found ${ref} conflicts, verify ${verifyTs.value.conflicts.length}`);
    }
    const row: Row = { shape, n, parse, base, verifyTs, verifyNative, simulate: sim, tx, heapAfter: heap.after, heapRetained: heap.retained, load: loadNow() };
    rows.push(row);
    const b = base.cpu;
    console.log(
      `${shape.padEnd(9)} ${String(n).padStart(8)}  ${f0(parse.cpu)}  ${f0(b)}         | ${f0(verifyTs.cpu)} (${r2(verifyTs.cpu / b)})     ${WITH_NATIVE ? `${f0(verifyNative.cpu)} (${r2(verifyNative.cpu / b)}, ${r2(verifyTs.cpu / verifyNative.cpu)})` : "     — (BENCH_NATIVE=0)     "} | ` +
        `${f0(sim.cpu)} (${r2(sim.cpu / b)}) | ${f0(tx.cpu)} (${r2(tx.cpu / b)}) | ${(heap.after / 1024).toFixed(2)} / ${(heap.retained / 1024).toFixed(2)}` +
        ` | ${row.load}   [${verifyTs.value.issues.length} issues, ${verifyTs.value.conflicts.length} conflicts, ${verifyTs.value.execution_levels.length} levels]`,
    );
  }
}

const mark = (ok: boolean) => (ok ? "pass" : "MISS");
console.log(`\ngrowth per 10x in size, CPU time (goal: each check <= ${GOAL.growth}x); baseline = JSON.parse + parseProposal:`);
console.log("shape     step                baseline  verify TS       verify native  simulate        transactionCheck");
for (const shape of SHAPE_LIST) {
  const of = (n: number) => rows.find((r) => r.shape === shape && r.n === n);
  for (let k = 1; k < SIZES.length; k++) {
    const [a, b] = [of(SIZES[k - 1]!), of(SIZES[k]!)];
    if (a === undefined || b === undefined || SIZES[k]! !== SIZES[k - 1]! * 10) continue;
    const g = (f: (r: Row) => Timing) => f(b).cpu / f(a).cpu;
    const goal = (f: (r: Row) => Timing) => `${r2(g(f)).padStart(7)} ${mark(g(f) <= GOAL.growth)}`;
    console.log(
      `${shape.padEnd(9)} ${`${SIZES[k - 1]} -> ${SIZES[k]}`.padEnd(19)} ${r2(g((r) => r.base)).padStart(7)}  ${goal((r) => r.verifyTs)}  ${(WITH_NATIVE ? r2(g((r) => r.verifyNative)) : "—").padStart(7)}        ${goal((r) => r.simulate)}  ${goal((r) => r.tx)}`,
    );
  }
}
console.log(`\ngoals at >= 100k: each check <= ${GOAL.ratio}x the baseline, verify's heap <= ${GOAL.heapKb} KB per action above the parsed proposal:`);
for (const r of rows.filter((x) => x.n >= 100_000)) {
  const ratio = (t: Timing) => `${r2(t.cpu / r.base.cpu).padStart(6)} ${mark(t.cpu / r.base.cpu <= GOAL.ratio)}`;
  console.log(
    `  ${r.shape.padEnd(9)} ${String(r.n).padStart(8)}  verify ${ratio(r.verifyTs)}  simulate ${ratio(r.simulate)}  transactionCheck ${ratio(r.tx)}  heap ${(r.heapAfter / 1024).toFixed(2)} KB ${mark(r.heapAfter / 1024 <= GOAL.heapKb)}  (load ${r.load})`,
  );
}

console.log("\nnative kernels against their TypeScript reference, marshalling included (goal >= 3x):");
if (process.env["BENCH_KERNELS"] === "0") console.log("  (skipped: BENCH_KERNELS=0)");
else runKernelBench(SIZES.filter((n) => n >= 100_000));
