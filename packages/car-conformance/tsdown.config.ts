import { defineConfig } from "tsdown";

export default defineConfig({
  entry: ["src/index.ts", "src/cli.ts", "src/store.ts"],
  format: "esm",
  dts: true,
  platform: "node",
});
