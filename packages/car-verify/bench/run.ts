/**
 * verify on random DAG proposals of 1k / 10k / 100k actions. Every number is
 * a ratio against a baseline measured in the same run: JSON.parse +
 * parseProposal of the same input (goal: verify ≤ 3× that), the growth from
 * 10k to 100k (goal ≤ 12×), and an all-pairs conflict check to show the gap
 * (run where it finishes quickly, extrapolated quadratically beyond).
 *
 * Each timing is the fastest of several runs, each after a full garbage
 * collection, as wall time and as this process's CPU time (on a shared
 * machine the CPU time is the steadier one).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { parseProposal } from "@car/ir";
import { verify } from "../src/index.ts";
import { allPairsConflicts } from "./all-pairs.ts";
import { randomProposalJson } from "./generate.ts";

const SIZES = [1_000, 10_000, 100_000];
/** The all-pairs reference is measured up to this size and extrapolated (n²) above it. */
const ALL_PAIRS_MAX = 10_000;

// A full collection before each timed run, so one run does not pay for the garbage of the last.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

interface Timing {
  wall: number;
  cpu: number;
}

function time<T>(runs: number, f: () => T): Timing & { value: T } {
  let value = f(); // warm-up
  let wall = Infinity;
  let cpu = Infinity;
  for (let r = 0; r < runs; r++) {
    collectGarbage();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    value = f();
    wall = Math.min(wall, performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu = Math.min(cpu, (c.user + c.system) / 1000);
  }
  return { wall, cpu, value };
}

interface Row {
  n: number;
  baseline: Timing;
  verify: Timing;
  allPairs: number;
  allPairsMeasured: boolean;
}

const ms = (x: number) => `${x.toFixed(1).padStart(7)} ms`;
const rows: Row[] = [];
for (const n of SIZES) {
  const text = randomProposalJson(n);
  const runs = n >= 100_000 ? 6 : n >= 10_000 ? 12 : 20;
  const base = time(runs, () => parseProposal(JSON.parse(text)));
  const proposal = base.value;
  const v = time(runs, () => verify(proposal));
  let allPairs: number;
  let measured = false;
  if (n <= ALL_PAIRS_MAX) {
    const ref = time(1, () => allPairsConflicts(proposal));
    if (ref.value !== v.value.conflicts.length) throw new Error(`all-pairs found ${ref.value} conflicts, verify ${v.value.conflicts.length}`);
    allPairs = ref.wall;
    measured = true;
  } else {
    const last = rows.findLast((r) => r.allPairsMeasured)!;
    allPairs = last.allPairs * (n / last.n) ** 2;
  }
  rows.push({ n, baseline: base, verify: v, allPairs, allPairsMeasured: measured });
  console.log(
    `n=${String(n).padStart(6)}  parse+parseProposal wall ${ms(base.wall)} cpu ${ms(base.cpu)} | verify wall ${ms(v.wall)} cpu ${ms(v.cpu)} | ` +
      `ratio wall ${(v.wall / base.wall).toFixed(2)}x cpu ${(v.cpu / base.cpu).toFixed(2)}x | conflicts ${v.value.conflicts.length}, levels ${v.value.execution_levels.length} | ` +
      `all-pairs ${allPairs.toFixed(0)} ms${measured ? "" : " (extrapolated n²)"} = ${(allPairs / v.wall).toFixed(0)}x verify`,
  );
}

const at = (n: number) => rows.find((r) => r.n === n)!;
const big = at(100_000);
const mid = at(10_000);
const verdict = (x: number, goal: number) => `${x.toFixed(2)}x ${x <= goal ? "OK" : "MISSED"}`;
console.log(`\nverify / (JSON.parse + parseProposal) at 100k (goal <= 3x): wall ${verdict(big.verify.wall / big.baseline.wall, 3)}, cpu ${verdict(big.verify.cpu / big.baseline.cpu, 3)}`);
console.log(`verify growth 10k -> 100k (goal <= 12x): wall ${verdict(big.verify.wall / mid.verify.wall, 12)}, cpu ${verdict(big.verify.cpu / mid.verify.cpu, 12)}`);
console.log(`baseline growth 10k -> 100k, for scale: wall ${(big.baseline.wall / mid.baseline.wall).toFixed(2)}x, cpu ${(big.baseline.cpu / mid.baseline.cpu).toFixed(2)}x`);
