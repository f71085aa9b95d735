import { defineConfig } from "tsdown";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "multi/index": "src/multi/index.ts",
    "skills/index": "src/skills/index.ts",
    "compat/index": "src/compat/index.ts",
    "planner/index": "src/planner/index.ts",
    "sqlite/index": "src/backends/sqlite/index.ts",
    "postgres/index": "src/backends/postgres/index.ts",
    "store-conformance": "src/backends/shared/store-conformance.ts",
    // A throwaway PostgreSQL cluster, for the tests of packages above this one (the CLI's server tests).
    "postgres-cluster": "test/support/postgres-cluster.ts",
  },
  format: "esm",
  dts: true,
  platform: "node",
});
