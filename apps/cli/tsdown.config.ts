import { defineConfig } from "tsdown";

/**
 * `car.mjs` is the bin; `hook.mjs` is the PreToolUse hook's own small entry
 * (reached from car.mjs by a dynamic import) so the editor's per-call hook
 * loads only the policy gate; `index.mjs` is the library surface. Commands
 * are dynamic imports and become their own chunks.
 */
export default defineConfig({
  entry: ["src/car.ts", "src/hook.ts", "src/index.ts"],
  format: "esm",
  dts: true,
  platform: "node",
  target: "node20",
});
