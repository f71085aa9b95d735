#!/usr/bin/env node
/**
 * The `car` bin, built as CommonJS (`dist/car.cjs`). Editors run `car
 * policy-check-hook` before every tool call, so its cold start is what
 * users feel: in CommonJS the hook's one bundle (`dist/hook.cjs`) loads
 * without Node's ES module loader, and with V8's code cache
 * (src/hook-loader.ts). Every other command goes to the ES module entry,
 * `dist/car.mjs`, unchanged.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { loadHook } from "./hook-loader.ts";

const [command, ...rest] = process.argv.slice(2);
if (command === "policy-check-hook") {
  const { hook, afterRun } = loadHook(join(__dirname, "hook.cjs"));
  if (rest.includes("--help") || rest.includes("-h")) process.stdout.write(`${hook.usage}\n`);
  else
    void hook.main().then((code) => {
      process.exitCode = code;
      afterRun();
    });
} else {
  void import(pathToFileURL(join(__dirname, "car.mjs")).href);
}
