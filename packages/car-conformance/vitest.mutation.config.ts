import { defineConfig } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.ts";

/**
 * The mutation run's only test command: RuntimeBench's scenarios against the
 * engine (test/engine.test.ts), nothing else — not the runner's own unit
 * tests, not the store suite. Built without `mergeConfig`, which would
 * concatenate `include` with the shared globs.
 */
export default defineConfig({
  resolve: sharedConfig.resolve,
  ssr: sharedConfig.ssr,
  test: { include: ["test/engine.test.ts"], testTimeout: 30_000, hookTimeout: 60_000 },
});
