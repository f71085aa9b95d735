import { defineConfig } from "tsdown";

export default defineConfig({
  // `gate` is its own entry so the CLI hook can load the gate without the rest of the package.
  entry: { index: "src/index.ts", gate: "src/gate/index.ts" },
  format: "esm",
  dts: true,
  platform: "node",
});
