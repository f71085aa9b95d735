import { defineConfig } from "vitest/config";

/**
 * Shared vitest settings: resolve workspace packages from `src/` through the
 * `source` export condition (no build needed), and write a JSON report that
 * `.ci/run` sums into its closing `N passed, N failed` line.
 */
export const sharedConfig = defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // `expect.poll` waits for something a real process or socket does; CI runs every suite at once on two cores, where
    // a server can take seconds to start. The wait ends as soon as the condition holds, so this costs a passing test nothing.
    expect: { poll: { timeout: 15_000 } },
  },
});
