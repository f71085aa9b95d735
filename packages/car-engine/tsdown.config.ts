import { defineConfig } from "tsdown";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "multi/index": "src/multi/index.ts",
    "skills/index": "src/skills/index.ts",
    "compat/index": "src/compat/index.ts",
    "planner/index": "src/planner/index.ts",
    "durable/index": "src/durable/index.ts",
  },
  format: "esm",
  dts: true,
  platform: "node",
});
