/**
 * The compiled plan (one parameter scan for the substring rules, the
 * normalisation index deciding what to normalise, the normalised halves run
 * after the as-sent pass) is only a faster way to run the rules: on random
 * rule sets of every kind and random hostile calls — respelled commands,
 * argv arrays, confusable and case-folding characters, odd whitespace, path
 * tricks, URLs in every spelling, non-string and prototype-named parameters
 * — it returns exactly what the reference returns, which calls each rule's
 * own `evaluate` in registration order and normalises every command and URL
 * (`normalisationIndex: false`): the same violations, reasons and order.
 */
import { emptyMap, type JsonObject, type JsonValue, setOwn } from "@car/ir";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PolicyEngine } from "./engine.ts";
import { PolicyRules } from "./files/policy-rules.ts";
import { normalisedParams } from "./gate/normalised-call.ts";
import { callbackRule } from "./rules/callback.ts";
import { denyToolParamRule } from "./rules/deny-tool-param.ts";
import { toolAction } from "./test-helpers.ts";

/** Characters that matter to the shell reader, the URL readers, the character sets and RE2's case folding. */
const CHARS = [
  ..."abcdefhiklmnoprstuwxyzACKRS0123456789 -/.:'\"\\$|;&@%[]{}()~#*=?_\t\n\r",
  "\u00a0",
  "\u2028",
  "\u3000",
  "é",
  "\u212a",
  "\u017f",
  "\u0130",
  "\u0131",
  "\uff52\uff4d",
  "\u0441",
  "\u0000",
  "\ud83d\ude00",
];
const WORDS = [
  "rm",
  "RM",
  "/bin/rm",
  "/usr/bin/../bin/rm",
  "r\\m",
  "'r'm",
  "-rf",
  "-fr",
  "-r -f",
  "--recursive",
  "/",
  "//",
  "/.",
  "/*",
  "c''url",
  '"cu"rl',
  "$'\\x63url'",
  "$'\\u0063url'",
  "CURL",
  "sudo",
  "env X=1",
  "bash -c",
  "sh -c 'curl x | sh'",
  "$(echo x)",
  "`id`",
  "|",
  "| sh",
  "&&",
  ";",
  "http://0xa9fea9fe/x",
  "http://2852039166/",
  "http://[::ffff:a9fe:a9fe]/",
  "https://api.example.org:8443/v",
  "http://10.0.0.5/a",
  "HTTP://EVIL.example.com.",
  "http://a@b.example.com/",
  "http://%65vil.com/",
  "169.254.169.254",
  "git push --force origin +main",
  "echo blocked-0",
  "password = x",
  "sk-abcdefghijklmnopqrstuvwxyz",
];
const URLS = [
  "https://docs.example.com/guide",
  "https://api.example.org:8443/v2/orders",
  "http://10.0.0.5:80/admin",
  "http://0xa9fea9fe/latest",
  "http://0251.0376.0251.0376/",
  "http://[::ffff:169.254.169.254]/",
  "http://github.com\\@evil.example.com/",
  "https://a.example.com/x?@evil.example.com",
  "HTTPS://Example.COM/Path",
  " https://docs.example.com/ ",
  "mailto:someone@example.com",
  "https://xn--bcher-kva.example/",
];

const text = (max: number) => fc.array(fc.constantFrom(...CHARS), { maxLength: max }).map((cs) => cs.join(""));
const command = fc.oneof(
  text(24),
  fc
    .tuple(fc.array(fc.oneof(fc.constantFrom(...WORDS), text(5)), { minLength: 1, maxLength: 6 }), fc.constantFrom(" ", "  ", "\t", " \\\n"))
    .map(([ws, gap]) => ws.join(gap)),
  fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
);
const url = fc.oneof(
  fc.constantFrom(...URLS),
  fc.tuple(fc.constantFrom(...URLS), text(6)).map(([u, t]) => u + t),
  text(16),
);
const other: fc.Arbitrary<JsonValue> = fc.oneof(
  text(10),
  url,
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(text(4), { maxLength: 3 }),
  fc.dictionary(text(3), text(4), { maxKeys: 2 }),
);
/** Any of the parameters, each as an own property (`__proto__` too), in a random order. */
const params: fc.Arbitrary<JsonObject> = fc
  .uniqueArray(
    fc.oneof(
      fc.tuple(fc.constant("command"), command as fc.Arbitrary<JsonValue>),
      fc.tuple(fc.constant("url"), url as fc.Arbitrary<JsonValue>),
      fc.tuple(fc.constantFrom("note", "body", "__proto__", "constructor"), other),
      fc.tuple(fc.constant("cwd"), fc.constantFrom("/work", "/work/repo", "/work/../etc") as fc.Arbitrary<JsonValue>),
    ),
    { selector: ([key]) => key, maxLength: 5 },
  )
  .map((entries) => {
    const out = emptyMap() as JsonObject;
    for (const [key, value] of entries) setOwn(out, key, value);
    return out;
  });

/** Pieces of `s` (and `s` itself), so the rules hit calls often. */
function piecesOf(s: string): fc.Arbitrary<string> {
  if (s.length === 0) return fc.constant("");
  return fc.tuple(fc.nat(s.length - 1), fc.integer({ min: 1, max: 12 })).map(([start, len]) => s.slice(start, start + len));
}

const PATTERNS = [
  "^https?://10\\.",
  "(?i)curl",
  "curl",
  "rm -[a-z]*f",
  "169\\.254",
  "(?i)evil",
  ".*",
  "a|b",
  "(?i)s",
  "^rm",
  "[",
  "(?i)k",
  "sk-[A-Za-z0-9]{20,}",
  "(?i)password\\s*=",
  "\\x41",
  "a\\.b?c",
];
const TOOLS = ["shell", "fetch"] as const;
const PARAMS = ["command", "url", "note", "body", "__proto__", "constructor"] as const;

const scenario = fc
  .tuple(fc.array(params, { minLength: 1, maxLength: 4 }), fc.array(fc.constantFrom(...TOOLS), { minLength: 4, maxLength: 4 }))
  .chain(([calls, tools]) => {
    const texts: string[] = ["rm -fr /", "curl"];
    for (const p of calls) {
      for (const v of Object.values(p)) texts.push(typeof v === "string" ? v : JSON.stringify(v));
      for (const v of Object.values(normalisedParams(p) ?? {})) if (typeof v === "string") texts.push(v);
    }
    const piece = fc.constantFrom(...texts).chain(piecesOf);
    // Pieces in the other case too, so case-folded rules meet text they match only by folding.
    const needle = fc.oneof(
      piece,
      piece.map((p) => p.toUpperCase()),
      text(4),
    );
    const tool = fc.constantFrom(...TOOLS);
    const param = fc.constantFrom(...PARAMS);
    const rules = fc.record({
      deny_tool: fc.array(tool, { maxLength: 1 }),
      deny_keyword: fc.array(needle, { maxLength: 4 }),
      deny_tool_param: fc.array(
        fc.oneof(
          fc.record({ tool, param, contains: needle }),
          fc.record({ tool, param }),
          fc.record({ tool, param, equals: fc.oneof(needle, fc.integer()) as fc.Arbitrary<JsonValue> }),
        ),
        { maxLength: 4 },
      ),
      allow_tool_param: fc.array(fc.record({ tool, param, allow: fc.array(needle, { maxLength: 2 }) }), { maxLength: 1 }),
      deny_tool_param_matching: fc.array(
        fc.record({
          tool,
          param,
          matches: fc.oneof(
            fc.constantFrom(...PATTERNS),
            needle,
            needle.map((n) => `(?i)${n}`),
          ),
          negate: fc.boolean(),
        }),
        {
          maxLength: 3,
        },
      ),
      deny_command: fc.array(
        fc.record({ program: fc.constantFrom("rm", "curl", "git"), flags: fc.constantFrom(["-r|-R|--recursive"], ["-f|--force"]) as fc.Arbitrary<string[]> }),
        {
          maxLength: 1,
        },
      ),
      rate_limit_tool: fc.array(fc.record({ tool, max_calls: fc.integer({ min: 1, max: 3 }), interval_secs: fc.constant(60) }), { maxLength: 1 }),
      registered: fc.array(fc.record({ tool, param, pattern: needle }), { maxLength: 1 }),
      callbackThrows: fc.boolean(),
    });
    return fc.tuple(fc.constant(calls), fc.constant(tools), rules);
  });

describe("the compiled plan", () => {
  it("decides every call exactly as each rule's own evaluate with every parameter normalised", () => {
    fc.assert(
      fc.property(scenario, ([calls, tools, spec]) => {
        const rules = new PolicyRules();
        rules.deny_tool = spec.deny_tool;
        rules.deny_keyword = spec.deny_keyword;
        rules.deny_tool_param = spec.deny_tool_param;
        rules.allow_tool_param = spec.allow_tool_param;
        rules.deny_tool_param_matching = spec.deny_tool_param_matching;
        rules.deny_command = spec.deny_command;
        rules.rate_limit_tool = spec.rate_limit_tool;
        const build = (engine: PolicyEngine): PolicyEngine => {
          rules.apply(engine);
          for (const r of spec.registered) engine.register(denyToolParamRule("registered", r.tool, r.param, r.pattern));
          // A rule that throws sits between the others, so an exception's place in the order is checked too.
          engine.register(
            callbackRule("callback", (action) => {
              if (spec.callbackThrows && Object.keys(action.parameters).length > 2) throw new Error("broken guard");
              return undefined;
            }),
          );
          rules.deny_keyword.forEach((k, i) =>
            engine.register(callbackRule(`late-${i}`, (action) => (JSON.stringify(action.parameters).includes(k) ? "late" : undefined))),
          );
          return engine;
        };
        const compiled = build(new PolicyEngine());
        const reference = build(new PolicyEngine({ normalisationIndex: false }));
        calls.forEach((p, i) => {
          const action = toolAction(tools[i] as string, p);
          expect(compiled.check(action)).toEqual(reference.check(action));
        });
      }),
      { numRuns: Number(process.env.RUNS ?? 400) },
    );
  });

  it("runs a case-folded regex on text that matches it only by folding, and a keyword in text beyond ASCII", () => {
    const rules = new PolicyRules();
    rules.deny_keyword = ["rm -rf /"];
    rules.deny_tool_param_matching = [{ tool: "fetch", param: "note", matches: "(?i)password\\s*=", negate: false }];
    rules.deny_tool_param = [{ tool: "fetch", param: "command", contains: "curl" }];
    const compiled = new PolicyEngine();
    const reference = new PolicyEngine({ normalisationIndex: false });
    rules.apply(compiled);
    rules.apply(reference);
    for (const parameters of [
      { note: "PASSWORD =" },
      { note: "PA\u017fSWORD=" },
      { note: "é rm -rf /" },
      { command: "c''url x" },
      { command: ["curl", "x"] },
      { command: "CURL x" },
    ] as JsonObject[]) {
      const action = toolAction("fetch", parameters);
      const found = compiled.check(action);
      expect(found).toEqual(reference.check(action));
      // Every one of these is denied by some rule.
      expect(found.length, JSON.stringify(parameters)).toBeGreaterThan(0);
    }
  });
});
