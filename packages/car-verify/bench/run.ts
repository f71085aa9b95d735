/**
 * verify on random DAG proposals of 1k / 10k / 100k actions. Every number is
 * a ratio against a baseline measured in the same run: JSON.parse +
 * parseProposal of the same input (goal: verify ≤ 3× that), the growth from
 * 10k to 100k (goal ≤ 12×), and an all-pairs conflict check to show the gap
 * (run where it finishes quickly, extrapolated quadratically beyond).
 */
import { parseProposal } from "@car/ir";
import { verify } from "../src/index.ts";
import { allPairsConflicts } from "./all-pairs.ts";
import { randomProposalJson } from "./generate.ts";

const SIZES = [1_000, 10_000, 100_000];
/** The all-pairs reference is measured up to this size and extrapolated (n²) above it. */
const ALL_PAIRS_MAX = 10_000;

/** The fastest of `runs` timings: the least disturbed by other load on the machine. */
function time<T>(runs: number, f: () => T): { ms: number; value: T } {
  let value = f(); // warm-up
  const samples: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    value = f();
    samples.push(performance.now() - t0);
  }
  return { ms: Math.min(...samples), value };
}

interface Row {
  n: number;
  baseline: number;
  verify: number;
  allPairs: number;
  allPairsMeasured: boolean;
}

const rows: Row[] = [];
for (const n of SIZES) {
  const text = randomProposalJson(n);
  const runs = n >= 100_000 ? 3 : n >= 10_000 ? 5 : 15;
  const base = time(runs, () => parseProposal(JSON.parse(text)));
  const proposal = base.value;
  const v = time(runs, () => verify(proposal));
  let allPairs: number;
  let measured = false;
  if (n <= ALL_PAIRS_MAX) {
    const ref = time(1, () => allPairsConflicts(proposal));
    if (ref.value !== v.value.conflicts.length) throw new Error(`all-pairs found ${ref.value} conflicts, verify ${v.value.conflicts.length}`);
    allPairs = ref.ms;
    measured = true;
  } else {
    const last = rows.findLast((r) => r.allPairsMeasured)!;
    allPairs = last.allPairs * (n / last.n) ** 2;
  }
  rows.push({ n, baseline: base.ms, verify: v.ms, allPairs, allPairsMeasured: measured });
  console.log(
    `n=${String(n).padStart(6)}  parse+parseProposal ${base.ms.toFixed(1).padStart(8)} ms  verify ${v.ms.toFixed(1).padStart(8)} ms  ` +
      `ratio ${(v.ms / base.ms).toFixed(2)}x  conflicts ${v.value.conflicts.length}  levels ${v.value.execution_levels.length}  ` +
      `all-pairs ${allPairs.toFixed(0)} ms${measured ? "" : " (extrapolated n²)"} = ${(allPairs / v.ms).toFixed(0)}x verify`,
  );
}

const at = (n: number) => rows.find((r) => r.n === n)!;
const ratio100k = at(100_000).verify / at(100_000).baseline;
const growth = at(100_000).verify / at(10_000).verify;
console.log(`\nverify / (JSON.parse + parseProposal) at 100k: ${ratio100k.toFixed(2)}x (goal <= 3x) ${ratio100k <= 3 ? "OK" : "MISSED"}`);
console.log(`verify growth 10k -> 100k: ${growth.toFixed(2)}x (goal <= 12x) ${growth <= 12 ? "OK" : "MISSED"}`);
console.log(`baseline growth 10k -> 100k: ${(at(100_000).baseline / at(10_000).baseline).toFixed(2)}x (for scale)`);
