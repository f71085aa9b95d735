import { defineConfig } from "tsdown";

/**
 * Two builds into `dist/`:
 * - the CLI: `car.mjs` (the ES module entry) and `index.mjs` (the library surface), with
 *   every command a dynamic import, so each becomes its own chunk and a
 *   command loads only what it uses;
 * - the PreToolUse hook, `hook.cjs`, which editors run on every tool call:
 *   bundled into one self-contained file (the policy gate and what it uses,
 *   tree-shaken) so its cold start reads one module instead of resolving
 *   the workspace packages and their dependencies, in CommonJS so it starts
 *   without the ES module loader. `car.mjs` reaches it by a computed import;
 *   the bin, `car.cjs` (src/car-bin.ts), requires it directly. `re2js` and `node:crypto` are swapped for loaders that
 *   bring them in on first use (src/lazy-re2js.ts, src/lazy-crypto.ts): the
 *   regex engine only matters when a policy has a regex rule, and crypto is
 *   never called on the hook's path.
 */
export default defineConfig([
  {
    entry: ["src/car.ts", "src/index.ts"],
    format: "esm",
    dts: true,
    platform: "node",
    target: "node20",
  },
  {
    entry: ["src/hook.ts"],
    // CommonJS: see src/car-bin.ts.
    format: "cjs",
    shims: true,
    dts: false,
    clean: false,
    platform: "node",
    target: "node20",
    deps: { alwaysBundle: [/^@car\//, "smol-toml"], onlyBundle: false },
    alias: {
      re2js: new URL("./src/lazy-re2js.ts", import.meta.url).pathname,
      "node:crypto": new URL("./src/lazy-crypto.ts", import.meta.url).pathname,
    },
    // Bundle the workspace packages from their sources, so the hook needs no prior build of them.
    inputOptions: { resolve: { conditionNames: ["source", "import", "node", "default"] } },
  },
  {
    entry: { car: "src/car-bin.ts" },
    format: "cjs",
    dts: false,
    clean: false,
    platform: "node",
    target: "node20",
  },
]);
