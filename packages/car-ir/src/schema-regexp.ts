/**
 * The regular-expression engine behind JSON Schema `pattern` and
 * `patternProperties` in tool schemas: RE2 semantics (re2js), so matching is
 * linear in the value's length whatever the pattern. A tool's schema is
 * written by whoever registers it and the value by whoever proposes the
 * call; with backtracking regexes a 40-character value can pin the process
 * for minutes. A pattern RE2 cannot run (backreferences, lookaround) is
 * refused when the schema is compiled, naming the pattern.
 *
 * ECMA-262 writes a code point as `\uXXXX` or `\u{X…}`; RE2 as `\x{X…}`.
 * That spelling is translated; everything else is RE2 syntax as written,
 * which agrees with ECMA-262 on what tool schemas use (classes, anchors,
 * quantifiers, `\d\w\s`, Unicode properties).
 */
import { createRequire } from "node:module";
import type { RegExpEngine } from "ajv/dist/types/index.js";
import type { RE2JS } from "re2js";
import { CarError } from "./errors.ts";

/** What ajv's `code.regExp` hook must return: a `test` and a stable `toString` (its cache key). */
export interface SchemaRegExp {
  test(value: string): boolean;
  toString(): string;
}

let engine: typeof RE2JS | undefined;

function re2(): typeof RE2JS {
  engine ??= (createRequire(import.meta.url)("re2js") as typeof import("re2js")).RE2JS;
  return engine;
}

const HEX4 = /^[0-9A-Fa-f]{4}$/;
const BRACED_HEX = /^\{([0-9A-Fa-f]{1,6})\}/;

/** Rewrites ECMA-262 `\uXXXX` / `\u{X…}` escapes to RE2's `\x{…}`; every other escape is kept verbatim. */
export function toRe2Syntax(pattern: string): string {
  if (!pattern.includes("\\u")) return pattern;
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c !== "\\" || i + 1 >= pattern.length) {
      out += c;
      continue;
    }
    const next = pattern[i + 1];
    if (next === "u") {
      const four = pattern.slice(i + 2, i + 6);
      if (HEX4.test(four)) {
        out += `\\x{${four}}`;
        i += 5;
        continue;
      }
      const braced = BRACED_HEX.exec(pattern.slice(i + 2));
      if (braced !== null) {
        out += `\\x{${braced[1]}}`;
        i += 1 + braced[0].length;
        continue;
      }
    }
    out += c + next;
    i += 1;
  }
  return out;
}

/** Compiles `pattern` with RE2, or refuses it with `invalid_schema`. */
function compileRe2(pattern: string): SchemaRegExp {
  let compiled: RE2JS;
  try {
    compiled = re2().compile(toRe2Syntax(pattern));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new CarError(
      "invalid_schema",
      `JSON Schema pattern ${JSON.stringify(pattern)} is not supported: patterns run with linear-time RE2 semantics, which have no backreferences or lookaround (${why})`,
      { pattern },
    );
  }
  return { test: (value) => compiled.test(value), toString: () => pattern };
}

/**
 * ajv's `code.regExp` hook. (`code` names the engine for ajv's standalone
 * code generator, which tool schemas never go through.)
 */
export const schemaRegExp: RegExpEngine = Object.assign(compileRe2, { code: "re2js" });
