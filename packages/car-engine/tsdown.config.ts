import { defineConfig } from "tsdown";

export default defineConfig({
  entry: { index: "src/index.ts", "sqlite/index": "src/backends/sqlite/index.ts" },
  format: "esm",
  dts: true,
  platform: "node",
});
