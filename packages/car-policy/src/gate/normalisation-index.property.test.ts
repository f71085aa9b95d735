/**
 * The normalisation index only ever skips work: on random rule sets and
 * actions, an engine that normalises a parameter only where a rule could
 * match its normal form returns exactly what an engine normalising every
 * command and URL returns — the same violations, reasons and order. Needles
 * are cut from the actions' own normal forms, so rules that match only
 * after normalising are common, not luck.
 */
import type { JsonObject } from "@car/ir";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PolicyEngine } from "../engine.ts";
import { PolicyRules } from "../files/policy-rules.ts";
import { toolAction } from "../test-helpers.ts";
import { canonicalUrls, isPlainUrl, mayHaveScheme, normalisedParams, PLAIN_URL, SCHEME_FIRST } from "./normalised-call.ts";

/** Characters that matter to the reader, the URL readers or the index's alphabet, and a few outside ASCII. */
const CHARS = [..."abcfhlmnrstuxAKRS019 -/.:'\"\\$|;&@%[]{}~#*=()\t\n", "é", "\u212a", "\u017f", "\u0130"];
const WORDS = [
  "rm",
  "-rf",
  "-r",
  "-f",
  "/",
  "//tmp/../",
  "c''url",
  '"cu"rl',
  "c\\url",
  "$'\\x63url'",
  "CURL",
  "sudo",
  "bash -c",
  "http://0xa9fea9fe/x",
  "https://api.example.org:8443/v",
  "http://10.0.0.5/a",
  "http://[::ffff:a9fe:a9fe]/",
  "HTTP://EVIL.example.com.",
  "http://a@b.example.com/",
  "http://%65vil.com/",
  "docker run -p 8080:80",
  "git push --force origin +main",
  "|",
  ";",
  "$(echo x)",
  "169.254.169.254",
];
const URLS = [
  "https://docs.example.com/guide",
  "https://api.example.org:8443/v2/orders",
  "http://10.0.0.5:80/admin",
  "http://0xa9fea9fe/latest",
  "http://2852039166/",
  "HTTPS://Example.COM/Path",
  "http://[::ffff:169.254.169.254]/",
  "http://github.com\\@evil.example.com/",
  "https://a.example.com/x?@evil.example.com",
  "http://%65vil.example.com/",
  "ftp://files.example.net:21/pub",
  "mailto:someone@example.com",
  "host:path",
];

const text = (max: number) => fc.array(fc.constantFrom(...CHARS), { maxLength: max }).map((cs) => cs.join(""));
const command = fc.oneof(
  text(30),
  fc.array(fc.oneof(fc.constantFrom(...WORDS), text(6)), { minLength: 1, maxLength: 6 }).map((ws) => ws.join(" ")),
  fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
);
const url = fc.oneof(
  fc.constantFrom(...URLS),
  fc.tuple(fc.constantFrom(...URLS), text(8)).map(([u, t]) => u + t),
  text(20),
);
const params = fc.record(
  { command, url, note: fc.oneof(text(12), url, fc.integer()), cwd: fc.constantFrom("/work", "/work/repo") },
  { requiredKeys: [] },
) as fc.Arbitrary<JsonObject>;

/** Pieces of `s` (and `s` itself), so rules can hit it. */
function piecesOf(s: string): fc.Arbitrary<string> {
  if (s.length === 0) return fc.constant("");
  return fc.tuple(fc.nat(s.length - 1), fc.integer({ min: 1, max: 12 })).map(([start, len]) => s.slice(start, start + len));
}

const PATTERNS = ["^https?://10\\.", "(?i)curl", "curl", "rm -[a-z]*f", "169\\.254", "(?i)evil", ".*", "a|b", "(?i)s", "^rm", "[", "(?i)k"];
const TOOLS = ["shell", "fetch"] as const;
const PARAMS = ["command", "url", "note"] as const;

const scenario = fc
  .tuple(fc.array(params, { minLength: 1, maxLength: 4 }), fc.array(fc.constantFrom(...TOOLS), { minLength: 4, maxLength: 4 }))
  .chain(([calls, tools]) => {
    // Texts as sent and as normalised (every parameter, no index), to cut needles from.
    const texts: string[] = ["rm -fr /"];
    for (const p of calls) {
      for (const v of Object.values(p)) texts.push(typeof v === "string" ? v : JSON.stringify(v));
      for (const v of Object.values(normalisedParams(p) ?? {})) if (typeof v === "string") texts.push(v);
    }
    const needle = fc.oneof(fc.constantFrom(...texts).chain(piecesOf), text(4));
    const rules = fc.record({
      keywords: fc.array(needle, { maxLength: 4 }),
      contains: fc.array(fc.record({ tool: fc.constantFrom(...TOOLS), param: fc.constantFrom(...PARAMS), contains: needle }), { maxLength: 4 }),
      presence: fc.array(fc.record({ tool: fc.constantFrom(...TOOLS), param: fc.constantFrom(...PARAMS) }), { maxLength: 1 }),
      regexes: fc.array(
        fc.record({
          tool: fc.constantFrom(...TOOLS),
          param: fc.constantFrom(...PARAMS),
          matches: fc.oneof(fc.constantFrom(...PATTERNS), needle),
          negate: fc.boolean(),
        }),
        { maxLength: 3 },
      ),
    });
    return fc.tuple(fc.constant(calls), fc.constant(tools), rules);
  });

describe("the normalisation index", () => {
  it("decides every call exactly as normalising every parameter does", () => {
    fc.assert(
      fc.property(scenario, ([calls, tools, spec]) => {
        const rules = new PolicyRules();
        rules.deny_keyword = spec.keywords;
        rules.deny_tool_param = [...spec.contains, ...spec.presence];
        rules.deny_tool_param_matching = spec.regexes;
        const indexed = new PolicyEngine();
        const reference = new PolicyEngine({ normalisationIndex: false });
        rules.apply(indexed);
        rules.apply(reference);
        calls.forEach((p, i) => {
          const action = toolAction(tools[i] as string, p);
          expect(indexed.check(action)).toEqual(reference.check(action));
        });
      }),
      { numRuns: Number(process.env.RUNS ?? 600) },
    );
  });

  it("reads a plain URL with a port or an IPv4 host as the URL readers do", () => {
    const host = fc.oneof(
      fc.constantFrom("example.com", "api.example.org", "a-b.c.example.net", "xn--bcher-kva.example"),
      fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join(".")),
    );
    const rest = fc.oneof(fc.constant(""), fc.constantFrom("/", "/v2/orders", "?q=1", "#top", "/a:b/c"));
    fc.assert(
      fc.property(fc.constantFrom("http", "https"), host, fc.option(fc.nat(99999), { nil: undefined }), rest, (scheme, h, port, r) => {
        const url = `${scheme}://${h}${port === undefined ? "" : `:${port}`}${r}`;
        const expected = canonicalUrls(url).join("\n");
        expect(normalisedParams({ url })?.url ?? url).toBe(expected);
      }),
      { numRuns: 400 },
    );
  });

  it("answers the URL pre-checks exactly as the regexes they stand in for", () => {
    const piece = fc.constantFrom(
      "http://",
      "https://",
      "HTTP://",
      "a",
      "z",
      "A",
      "0",
      "9",
      "-",
      ".",
      "..",
      "/",
      "?",
      "#",
      ":",
      "@",
      "\\",
      " ",
      "\t",
      "\u00a0",
      "é",
      "_",
      "x".repeat(63),
      "y".repeat(64),
    );
    const candidate = fc.oneof(
      text(12),
      fc.array(piece, { maxLength: 10 }).map((ps) => ps.join("")),
    );
    fc.assert(
      fc.property(candidate, (s) => {
        expect(isPlainUrl(s)).toBe(PLAIN_URL.test(s));
        expect(mayHaveScheme(s)).toBe(SCHEME_FIRST.test(s));
      }),
      { numRuns: 5000 },
    );
  });
});
