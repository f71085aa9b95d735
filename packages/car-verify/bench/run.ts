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
const runsFor = (n: number) => (n >= 1_000_000 ? 1 : n >= 100_000 ? 2 : 4);

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
}

const f0 = (x: number) => x.toFixed(0).padStart(6);
const r2 = (x: number) => `${x.toFixed(2)}x`;
const rows: Row[] = [];
const status = nativeStatus();
console.log(
  `@car/native: ${status.available ? "loaded" : "not loaded"} (${status.reason}); load ${(await import("node:os"))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
console.log("times in ms, CPU time (fastest run); ratios against JSON.parse + parseProposal of the same text\n");
console.log(
  "shape      n        JSON.parse  +parseProposal | verify TS (ratio)  verify native (ratio, TS/native) | simulate (ratio) | transactionCheck (ratio) | heap KB/action after / retained",
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
    const verifyTs = time(runs, () => verify(proposal));
    const heap = heapPer(n, () => verify(proposal));
    setNativeMode("always");
    const verifyNative = time(runs, () => verify(proposal));
    setNativeMode("auto");
    const sim = time(runs, () => simulate(proposal));
    const tx = time(runs, () => transactionCheck(proposal));
    if (shape === "random" && n === 10_000) {
      const ref = allPairsConflicts(proposal);
      if (ref !== verifyTs.value.conflicts.length) throw new Error(`all-pairs found ${ref} conflicts, verify ${verifyTs.value.conflicts.length}`);
    }
    const row: Row = { shape, n, parse, base, verifyTs, verifyNative, simulate: sim, tx, heapAfter: heap.after, heapRetained: heap.retained };
    rows.push(row);
    const b = base.cpu;
    console.log(
      `${shape.padEnd(9)} ${String(n).padStart(8)}  ${f0(parse.cpu)}  ${f0(b)}         | ${f0(verifyTs.cpu)} (${r2(verifyTs.cpu / b)})     ${f0(verifyNative.cpu)} (${r2(verifyNative.cpu / b)}, ${r2(verifyTs.cpu / verifyNative.cpu)}) | ` +
        `${f0(sim.cpu)} (${r2(sim.cpu / b)}) | ${f0(tx.cpu)} (${r2(tx.cpu / b)}) | ${(heap.after / 1024).toFixed(2)} / ${(heap.retained / 1024).toFixed(2)}` +
        `   [${verifyTs.value.issues.length} issues, ${verifyTs.value.conflicts.length} conflicts, ${verifyTs.value.execution_levels.length} levels]`,
    );
  }
}

console.log("\ngrowth per 10x (goal <= 12x), CPU time:");
for (const shape of SHAPE_LIST) {
  const of = (n: number) => rows.find((r) => r.shape === shape && r.n === n);
  const parts: string[] = [];
  for (let k = 1; k < SIZES.length; k++) {
    const [a, b] = [of(SIZES[k - 1]!)!, of(SIZES[k]!)!];
    const g = (f: (r: Row) => Timing) => r2(f(b).cpu / f(a).cpu);
    parts.push(
      `${SIZES[k - 1]} -> ${SIZES[k]}: parse ${g((r) => r.base)}, verify ${g((r) => r.verifyTs)} (native ${g((r) => r.verifyNative)}), simulate ${g((r) => r.simulate)}, transactionCheck ${g((r) => r.tx)}`,
    );
  }
  console.log(`  ${shape.padEnd(9)} ${parts.join(" | ")}`);
}
const worst = (f: (r: Row) => number) => Math.max(0, ...rows.filter((r) => r.n >= 100_000).map(f));
console.log(
  `\nworst at >= 100k: verify ${r2(worst((r) => r.verifyTs.cpu / r.base.cpu))} (goal <= 5x), simulate ${r2(worst((r) => r.simulate.cpu / r.base.cpu))}, transactionCheck ${r2(worst((r) => r.tx.cpu / r.base.cpu))}; heap ${(worst((r) => r.heapAfter) / 1024).toFixed(2)} KB/action (goal <= 2)`,
);

console.log("\nnative kernels against their TypeScript reference, marshalling included (goal >= 3x):");
runKernelBench(SIZES.filter((n) => n >= 100_000));
