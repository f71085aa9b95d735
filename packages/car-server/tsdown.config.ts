import { defineConfig } from "tsdown";

export default defineConfig({
  // `home`, `car-home`, `argv`, `postures` and `run-report` are their own entries: `car` opens the database and reads flags without
  // loading `ws`, `car audit report` draws a run without the server, and the PreToolUse hook bundles only `car-home`.
  entry: {
    index: "src/index.ts",
    home: "src/home.ts",
    "car-home": "src/car-home.ts",
    argv: "src/argv.ts",
    postures: "src/postures/default-posture.ts",
    "run-report": "src/report/index.ts",
    // `car mcp`'s skill tools read and write the server's skill library (owners, files) without the server.
    skills: "src/skill-library.ts",
  },
  format: "esm",
  dts: true,
  platform: "node",
  target: "node20",
});
