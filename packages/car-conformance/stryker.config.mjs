// @ts-check
/**
 * The mutation run: StrykerJS mutates the engine's semantic core and checks
 * that RuntimeBench alone — the scenarios run against @car/engine in
 * process (test/engine.test.ts), no unit tests — notices. Run it with
 * `pnpm --filter @car/conformance mutation`; the HTML report is written to
 * reports/mutation/mutation.html. It is CPU-heavy (tens of minutes) and not
 * part of CI. Mutants are applied in place (the packages import each other
 * through the workspace, which a copied sandbox would break): do not edit
 * the mutated files while it runs.
 */
import { createRequire } from "node:module";

// The runner plugin is this package's dev dependency; Stryker, started at the repository root, would not find it by name.
const require = createRequire(import.meta.url);

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
const config = {
  // Paths are relative to the repository root, where the `mutation` script starts Stryker.
  mutate: [
    // @car/engine: the executor — scheduling, the per-action pipeline (preconditions, policies, references),
    // dispatch (cache, retries, timeouts), outcomes and rollback, the tier gate (reached through the optional
    // `approvals` capability), admission and the call gate — and the result cache. admission/budgets.ts is left out:
    // it checks a CostBudget, which the adapter contract cannot set. Survivors no scenario may kill are judged in
    // mutation/classified.json, and `pnpm --filter @car/conformance mutation:score` computes the goal's score from the
    // JSON report (see MUTATION.md).
    "packages/car-engine/src/run/*.ts",
    "packages/car-engine/src/admission/*.ts",
    "!packages/car-engine/src/admission/budgets.ts",
    "packages/car-engine/src/gates/*.ts",
    "packages/car-engine/src/tools/result-cache.ts",
    // @car/ir: preconditions, $id.output references, the DAG.
    "packages/car-ir/src/precondition.ts",
    "packages/car-ir/src/refs.ts",
    "packages/car-ir/src/dag.ts",
    // @car/verify: simulate and optimize (and the forward walk they share).
    "packages/car-verify/src/simulate.ts",
    "packages/car-verify/src/optimize.ts",
    "packages/car-verify/src/walk.ts",
    "!**/*.test.ts",
  ],
  testRunner: "vitest",
  plugins: [require.resolve("@stryker-mutator/vitest-runner")],
  vitest: { configFile: "packages/car-conformance/vitest.mutation.config.ts", dir: "packages/car-conformance" },
  coverageAnalysis: "perTest",
  inPlace: true,
  // Vitest does not type-check, and in place a `// @ts-nocheck` would be written into every source file of the repository.
  disableTypeChecks: false,
  ignoreStatic: true,
  incremental: true,
  incrementalFile: "packages/car-conformance/reports/stryker-incremental.json",
  concurrency: 2,
  timeoutMS: 10_000,
  timeoutFactor: 2,
  // event-recorder writes each mutant's result as it is known, so a long run can be read before it ends.
  reporters: ["html", "clear-text", "progress", "json", "event-recorder"],
  eventReporter: { baseDir: "packages/car-conformance/reports/mutation/events" },
  htmlReporter: { fileName: "packages/car-conformance/reports/mutation/mutation.html" },
  jsonReporter: { fileName: "packages/car-conformance/reports/mutation/mutation.json" },
  tempDirName: "packages/car-conformance/.stryker-tmp",
  cleanTempDir: "always",
};
export default config;
