/**
 * The kernel table alone (`pnpm --filter @car/verify bench:kernels`): 100k and
 * 1M actions unless `BENCH_SIZES` says otherwise. The 1M rows want a larger
 * heap: `NODE_OPTIONS=--max-old-space-size=8192`.
 */
import { runKernelBench } from "./kernels.ts";

const sizes = process.env["BENCH_SIZES"]?.split(",").map(Number) ?? [100_000, 1_000_000];
console.log("native kernels against their TypeScript reference, marshalling included (goal >= 3x; fastest CPU time of alternating runs):");
runKernelBench(sizes);
