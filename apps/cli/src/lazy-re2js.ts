/**
 * Stands in for `re2js` inside the bundled hook (`dist/hook.cjs`, see
 * tsdown.config.ts): the real engine is a quarter of a megabyte that only a
 * `deny_tool_param_matching` rule needs, so it is loaded on the first
 * `RE2JS.compile`, not on every tool call a host checks. It is resolved from
 * @car/policy, whose dependency it is.
 */
import { createRequire } from "node:module";

/** The part of re2js's `RE2JS` class @car/policy calls; what `compile` returns is the real pattern object. */
interface Engine {
  compile(pattern: string, flags?: number): unknown;
}

let engine: Engine | undefined;

function load(): Engine {
  if (engine === undefined) {
    const fromCli = createRequire(import.meta.url);
    const fromPolicy = createRequire(fromCli.resolve("@car/policy/package.json"));
    engine = (fromPolicy("re2js") as { RE2JS: Engine }).RE2JS;
  }
  return engine;
}

export const RE2JS = {
  compile(pattern: string, flags?: number): unknown {
    return load().compile(pattern, flags);
  },
};
