import { describe, expect, it } from "vitest";
import { expectPositionals, parseArgs } from "./argv.ts";

const specs = {
  state: { type: "string" },
  json: { type: "boolean" },
  output: { type: "string", short: "o" },
  policies: { type: "string", multiple: true },
} as const;

describe("parseArgs", () => {
  it("reads values in both spellings, flags, aliases and repeated options", () => {
    const { positionals, options } = parseArgs(["p.json", "--state", "s.json", "--json", "-o", "out.html", "--policies=a", "--policies", "b"], specs);
    expect(positionals).toEqual(["p.json"]);
    expect(options).toEqual({ state: "s.json", json: true, output: "out.html", policies: ["a", "b"] });
    expect(parseArgs(["--state=a=b"], specs).options.state).toBe("a=b");
  });

  it("treats a lone - as a positional and stops at --", () => {
    expect(parseArgs(["-", "--", "--json", "-x"], specs)).toEqual({ positionals: ["-", "--json", "-x"], options: {} });
  });

  it("accepts --no-<flag> for booleans", () => {
    expect(parseArgs(["--json", "--no-json"], specs).options.json).toBe(false);
  });

  it.each([
    [["--nope"], "unknown option '--nope'"],
    [["-z"], "unknown option '-z'"],
    [["--state"], "option '--state' needs a value"],
    [["--state", "--json"], "option '--state' needs a value"],
    [["--json=yes"], "option '--json' takes no value"],
    [["--state", "a", "--state", "b"], "option '--state' given more than once"],
    [["--no-state"], "unknown option '--no-state'"],
  ])("refuses %j as a usage error", (args, message) => {
    expect(() => parseArgs(args, specs)).toThrow(expect.objectContaining({ code: "invalid_params", message }));
  });

  it("names a missing or extra positional", () => {
    expect(() => expectPositionals([], ["proposal.json"])).toThrow("missing argument <proposal.json>");
    expect(() => expectPositionals(["a", "b"], ["proposal.json"])).toThrow("unexpected argument 'b'");
    expect(expectPositionals(["a", "b"], ["a.json", "b.json"])).toEqual(["a", "b"]);
  });

  it("never lets an option name reach Object.prototype", () => {
    expect(() => parseArgs(["--__proto__", "x"], specs)).toThrow("unknown option '--__proto__'");
    expect(() => parseArgs(["--constructor"], specs)).toThrow("unknown option '--constructor'");
  });
});
