import { defineConfig } from "tsdown";

export default defineConfig({
  entry: ["src/index.ts", "src/protocol/index.ts"],
  format: "esm",
  dts: true,
  platform: "node",
});
