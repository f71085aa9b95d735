import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isCarError } from "@car/ir";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PolicyEngine } from "../engine.ts";
import { toolAction } from "../test-helpers.ts";
import { loadPolicyDir } from "./load-policy-dir.ts";
import { PolicyLoadError } from "./policy-load-error.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "car-policy-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("loadPolicyDir", () => {
  it("a missing directory is an empty rule set", () => {
    expect(loadPolicyDir(join(dir, "nope")).len).toBe(0);
  });

  it("reads every *.toml in file-name order and ignores other files", () => {
    writeFileSync(join(dir, "b.toml"), 'deny_tool = ["second"]\n');
    writeFileSync(join(dir, "a.toml"), 'deny_tool = ["first"]\n');
    writeFileSync(join(dir, "README.md"), "deny_tool = [ not toml");
    writeFileSync(join(dir, "c.toml.bak"), "garbage [");
    mkdirSync(join(dir, "sub.toml"));
    const rules = loadPolicyDir(dir);
    expect(rules.deny_tool).toEqual(["first", "second"]);
    const engine = new PolicyEngine();
    rules.apply(engine);
    expect(engine.names()).toEqual(["deny_tool:first", "deny_tool:second"]);
    expect(engine.check(toolAction("second"))).toHaveLength(1);
  });

  // Every shape a malformed file can take fails the whole load, naming the file.
  const MALFORMED: [string, string][] = [
    ["not TOML", "deny_tool = [ this is not toml\n"],
    ["unknown top-level key", 'deny_tools = ["x"]\n'],
    ["deny_tool not an array", 'deny_tool = "x"\n'],
    ["deny_tool with a non-string", "deny_tool = [1]\n"],
    ["deny_keyword not an array", "deny_keyword = 5\n"],
    ["deny_tool_param not a table array", 'deny_tool_param = ["x"]\n'],
    ["deny_tool_param missing tool", '[[deny_tool_param]]\nparam = "p"\n'],
    ["deny_tool_param missing param", '[[deny_tool_param]]\ntool = "t"\n'],
    ["deny_tool_param unknown key", '[[deny_tool_param]]\ntool = "t"\nparam = "p"\nequal = "x"\n'],
    ["deny_tool_param contains not a string", '[[deny_tool_param]]\ntool = "t"\nparam = "p"\ncontains = 3\n'],
    ["deny_tool_param tool not a string", '[[deny_tool_param]]\ntool = 1\nparam = "p"\n'],
    ["allow_tool_param allow not a list", '[[allow_tool_param]]\ntool = "t"\nparam = "p"\nallow = "x"\n'],
    ["allow_tool_param allow with a number", '[[allow_tool_param]]\ntool = "t"\nparam = "p"\nallow = [1]\n'],
    ["allow_tool_param unknown key", '[[allow_tool_param]]\ntool = "t"\nparam = "p"\nallowed = []\n'],
    ["matching without matches", '[[deny_tool_param_matching]]\ntool = "t"\nparam = "p"\n'],
    ["matching negate not a bool", '[[deny_tool_param_matching]]\ntool = "t"\nparam = "p"\nmatches = "x"\nnegate = "yes"\n'],
    ["matching unknown key", '[[deny_tool_param_matching]]\ntool = "t"\nparam = "p"\nmatches = "x"\nflags = "i"\n'],
    ["rate limit missing max_calls", '[[rate_limit_tool]]\ntool = "t"\ninterval_secs = 1\n'],
    ["rate limit missing interval", '[[rate_limit_tool]]\ntool = "t"\nmax_calls = 1\n'],
    ["rate limit negative max_calls", '[[rate_limit_tool]]\ntool = "t"\nmax_calls = -1\ninterval_secs = 1\n'],
    ["rate limit fractional max_calls", '[[rate_limit_tool]]\ntool = "t"\nmax_calls = 1.5\ninterval_secs = 1\n'],
    ["rate limit string interval", '[[rate_limit_tool]]\ntool = "t"\nmax_calls = 1\ninterval_secs = "60"\n'],
    ["rate limit zero interval", '[[rate_limit_tool]]\ntool = "t"\nmax_calls = 1\ninterval_secs = 0\n'],
    ["rate limit unknown key", '[[rate_limit_tool]]\ntool = "t"\nmax_calls = 1\ninterval_secs = 1\nburst = 2\n'],
    ["a trace_rule without a kind", '[[trace_rule]]\nname = "x"\n'],
    ["a trace_rule of an unknown kind", '[[trace_rule]]\nkind = "eventually"\ntool = "t"\n'],
    ["an only_after without after", '[[trace_rule]]\nkind = "only_after"\ntool = "deploy"\n'],
    ["a trace_rule with an operand of another kind", '[[trace_rule]]\nkind = "never_after"\ntool = "a"\nafter = "b"\nmax_calls = 1\n'],
    ["a max_calls that is negative", '[[trace_rule]]\nkind = "max_calls"\ntool = "a"\nmax_calls = -1\n'],
    ["a max_calls that is fractional", '[[trace_rule]]\nkind = "max_calls"\ntool = "a"\nmax_calls = 0.5\n'],
    ["a trace_rule scope that is not a scope", '[[trace_rule]]\nkind = "requires_approval"\ntool = "a"\nscope = "forever"\n'],
    ["a trace_rule with an empty tool", '[[trace_rule]]\nkind = "requires_approval"\ntool = ""\n'],
    ["trace_rule not a table array", 'trace_rule = ["deploy after tests"]\n'],
    ["a __proto__ key", "__proto__ = 1\n"],
    ["a table where a list belongs", "[deny_tool]\nx = 1\n"],
  ];

  for (const [what, toml] of MALFORMED) {
    it(`fails closed on ${what}, naming the file`, () => {
      writeFileSync(join(dir, "a.toml"), 'deny_tool = ["fine"]\n');
      const bad = join(dir, "rules.toml");
      writeFileSync(bad, toml);
      let thrown: unknown;
      try {
        loadPolicyDir(dir);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(PolicyLoadError);
      expect(isCarError(thrown, "policy_load_failed")).toBe(true);
      expect((thrown as PolicyLoadError).message).toContain(bad);
      expect((thrown as PolicyLoadError).file).toBe(bad);
    });
  }

  it("an empty file and every valid key together load", () => {
    writeFileSync(join(dir, "empty.toml"), "");
    writeFileSync(
      join(dir, "all.toml"),
      `deny_tool = ["a"]
deny_keyword = ["b"]
[[deny_tool_param]]
tool = "t"
param = "p"
equals = 1985-05-01T00:00:00Z
[[allow_tool_param]]
tool = "t"
param = "q"
[[deny_tool_param_matching]]
tool = "t"
param = "r"
matches = "x"
[[rate_limit_tool]]
tool = "t"
max_calls = 3
interval_secs = 1.5
[[trace_rule]]
kind = "only_after"
tool = "deploy"
after = "run_tests"
[[trace_rule]]
kind = "max_calls"
tool = "send_email"
max_calls = 2
scope = "session"
name = "two_emails"
`,
    );
    const rules = loadPolicyDir(dir);
    expect(rules.len).toBe(8);
    expect(rules.trace_rule).toEqual([
      { kind: "only_after", tool: "deploy", after: "run_tests", scope: "proposal" },
      { kind: "max_calls", tool: "send_email", max_calls: 2, scope: "session", name: "two_emails" },
    ]);
    expect(rules.deny_tool_param[0]?.equals).toBe("1985-05-01T00:00:00.000Z");
    expect(rules.allow_tool_param[0]?.allow).toEqual([]);
  });
});
