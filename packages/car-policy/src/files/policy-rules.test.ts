import { describe, expect, it } from "vitest";
import { PolicyEngine } from "../engine.ts";
import { toolAction } from "../test-helpers.ts";
import { parsePolicyFile } from "./parse-policy-file.ts";

function engineFor(toml: string, clock?: { now(): number }): PolicyEngine {
  const engine = new PolicyEngine();
  parsePolicyFile("test.toml", toml).apply(engine, clock ? { clock } : {});
  return engine;
}

describe("file rule kinds", () => {
  it("deny_tool refuses the listed tools with a stable name", () => {
    const engine = engineFor('deny_tool = ["deploy", "rm"]\n');
    expect(engine.names()).toEqual(["deny_tool:deploy", "deny_tool:rm"]);
    expect(engine.check(toolAction("deploy")).map((v) => v.policy_name)).toEqual(["deny_tool:deploy"]);
    expect(engine.check(toolAction("Deploy"))).toEqual([]);
  });

  it("deny_keyword matches every string-coerced parameter of every tool and never echoes the value", () => {
    const engine = engineFor('deny_keyword = ["DROP TABLE", "rm -rf /"]\n');
    const [v] = engine.check(toolAction("sql", { db: "main", query: "DROP TABLE users; -- secret" }));
    expect(v?.policy_name).toBe("deny_keyword:DROP TABLE");
    expect(v?.reason).toContain("query");
    expect(v?.reason).not.toContain("secret");
    expect(engine.check(toolAction("x", { nested: { deep: ["rm -rf /"] } })).map((x) => x.policy_name)).toEqual(["deny_keyword:rm -rf /"]);
    expect(engine.check(toolAction("x", { q: "drop table" }))).toEqual([]);
  });

  it("deny_tool_param: equals, contains, both, neither; absence never violates", () => {
    const engine = engineFor(`
[[deny_tool_param]]
tool = "http_request"
param = "url"
contains = "169.254.169.254"

[[deny_tool_param]]
tool = "shell"
param = "command"
equals = "shutdown"

[[deny_tool_param]]
tool = "deploy"
param = "env"
equals = "prod"
contains = "pro"

[[deny_tool_param]]
tool = "mail"
param = "bcc"

[[deny_tool_param]]
tool = "cfg"
param = "opts"
equals = { retries = 3, tags = ["a"] }
`);
    const names = (tool: string, params: Record<string, never> | object) => engine.check(toolAction(tool, params as never)).map((v) => v.policy_name);
    expect(names("http_request", { url: "http://169.254.169.254/latest/meta-data" })).toEqual(["deny_tool_param:http_request.url"]);
    expect(names("http_request", { url: "https://example.org" })).toEqual([]);
    expect(names("http_request", {})).toEqual([]);
    expect(names("shell", { command: "shutdown" })).toEqual(["deny_tool_param:shell.command"]);
    expect(names("shell", { command: "shutdown now" })).toEqual([]);
    expect(names("deploy", { env: "prod" })).toEqual(["deny_tool_param:deploy.env"]);
    expect(names("deploy", { env: "preprod" })).toEqual([]);
    expect(names("mail", { bcc: "" })).toEqual(["deny_tool_param:mail.bcc"]);
    expect(names("mail", { to: "x" })).toEqual([]);
    expect(names("cfg", { opts: { tags: ["a"], retries: 3 } })).toEqual(["deny_tool_param:cfg.opts"]);
    const [v] = engine.check(toolAction("http_request", { url: "http://169.254.169.254/" }));
    expect(v?.reason).not.toContain("169.254");
  });

  it("allow_tool_param fails closed three ways and leaves other tools alone", () => {
    const engine = engineFor(`
[[allow_tool_param]]
tool = "deploy"
param = "target"
allow = ["staging", "preview"]

[[allow_tool_param]]
tool = "nuke"
param = "target"
`);
    const names = (tool: string, params: object) => engine.check(toolAction(tool, params as never)).map((v) => v.policy_name);
    expect(names("deploy", { target: "staging" })).toEqual([]);
    expect(names("deploy", { target: "prod" })).toEqual(["allow_tool_param:deploy.target"]);
    expect(names("deploy", { target: "Staging" })).toEqual(["allow_tool_param:deploy.target"]);
    expect(names("deploy", {})).toEqual(["allow_tool_param:deploy.target"]);
    expect(names("nuke", { target: "anything" })).toEqual(["allow_tool_param:nuke.target"]);
    expect(names("other", { target: "prod" })).toEqual([]);
    const [v] = engine.check(toolAction("deploy", { target: "prod-secret" }));
    expect(v?.reason).not.toContain("prod-secret");
  });

  it("deny_tool_param_matching is unanchored, supports RE2 inline flags and negate, and never echoes the match", () => {
    const engine = engineFor(`
[[deny_tool_param_matching]]
tool = "http_request"
param = "body"
matches = "sk-[A-Za-z0-9]{20,}"

[[deny_tool_param_matching]]
tool = "messaging.send"
param = "body"
matches = "(?i)demo-token-[A-Za-z0-9]{16,}"

[[deny_tool_param_matching]]
tool = "docker.rm"
param = "name"
matches = "^parslee-"
negate = true
`);
    const names = (tool: string, params: object) => engine.check(toolAction(tool, params as never)).map((v) => v.policy_name);
    const secret = "sk-abcdefghijklmnopqrstuvwxyz";
    expect(names("http_request", { body: `key=${secret}&x=1` })).toEqual(["deny_tool_param_matching:http_request.body"]);
    expect(names("http_request", { body: "sk-short" })).toEqual([]);
    expect(names("http_request", {})).toEqual([]);
    expect(names("messaging.send", { body: "DEMO-TOKEN-ABCDEFGHIJKLMNOP" })).toEqual(["deny_tool_param_matching:messaging.send.body"]);
    expect(names("docker.rm", { name: "parslee-db" })).toEqual([]);
    expect(names("docker.rm", { name: "prod-db" })).toEqual(["deny_tool_param_matching:docker.rm.name"]);
    expect(names("docker.rm", {})).toEqual(["deny_tool_param_matching:docker.rm.name"]);
    const [v] = engine.check(toolAction("http_request", { body: secret }));
    expect(v?.reason).not.toContain(secret);
    expect(v?.reason).not.toContain("sk-");
  });

  it("an uncompilable pattern denies every call to its tool, with the compile error", () => {
    const engine = engineFor(`
[[deny_tool_param_matching]]
tool = "http_request"
param = "body"
matches = "(unclosed"
`);
    // Perl lookahead is not RE2: refused at compile, so it denies too.
    const lookahead = engineFor(`
[[deny_tool_param_matching]]
tool = "t"
param = "p"
matches = "a(?=b)"
`);
    expect(engine.check(toolAction("http_request", {}))).toHaveLength(1);
    expect(engine.check(toolAction("http_request", { body: "fine" }))[0]?.reason).toContain("does not compile");
    expect(engine.check(toolAction("other", { body: "x" }))).toEqual([]);
    expect(lookahead.check(toolAction("t", { p: "zzz" }))).toHaveLength(1);
  });

  it("a regex with catastrophic backtracking elsewhere runs in linear time here", () => {
    const engine = engineFor(`
[[deny_tool_param_matching]]
tool = "t"
param = "p"
matches = "(a+)+$"
`);
    // 100k 'a's then a '!': `$` can never follow the run, and a backtracking
    // engine explores every split of the run before saying so.
    const adversarial = `${"a".repeat(100_000)}!`;
    expect(engine.check(toolAction("t", { p: adversarial }))).toEqual([]);
    // Positive control: the same pattern does fire on a matching value.
    expect(engine.check(toolAction("t", { p: "a".repeat(100_000) })).map((v) => v.policy_name)).toEqual(["deny_tool_param_matching:t.p"]);
  });

  it("rate_limit_tool is a sliding window: admission consumes, its own denial does not", () => {
    let now = 0;
    const clock = { now: () => now };
    const engine = engineFor(
      `
[[rate_limit_tool]]
tool = "http_request"
max_calls = 2
interval_secs = 10.0
`,
      clock,
    );
    const call = () => engine.check(toolAction("http_request")).map((v) => v.policy_name);
    expect(call()).toEqual([]); // t=0 admitted
    now = 4000;
    expect(call()).toEqual([]); // t=4 admitted
    now = 5000;
    expect(call()).toEqual(["rate_limit_tool:http_request"]);
    now = 9999;
    expect(call()).toEqual(["rate_limit_tool:http_request"]);
    now = 10_000; // t=0 ages out; the refusals above took no slot
    expect(call()).toEqual([]);
    expect(call()).toEqual(["rate_limit_tool:http_request"]);
    now = 14_000; // t=4 ages out
    expect(call()).toEqual([]);
    expect(engine.check(toolAction("other"))).toEqual([]);
  });

  it("a call denied by another rule still consumes rate-limit budget", () => {
    let now = 0;
    const engine = engineFor(
      `
deny_keyword = ["forbidden"]

[[rate_limit_tool]]
tool = "send"
max_calls = 1
interval_secs = 60
`,
      { now: () => now },
    );
    expect(engine.check(toolAction("send", { body: "forbidden" })).map((v) => v.policy_name)).toEqual(["deny_keyword:forbidden"]);
    now = 1000;
    expect(engine.check(toolAction("send", { body: "ok" })).map((v) => v.policy_name)).toEqual(["rate_limit_tool:send"]);
  });

  it("max_calls = 0 denies every call, and each engine has its own window", () => {
    const zero = engineFor('[[rate_limit_tool]]\ntool = "t"\nmax_calls = 0\ninterval_secs = 1\n');
    expect(zero.check(toolAction("t"))).toHaveLength(1);
    const rules = parsePolicyFile("f.toml", '[[rate_limit_tool]]\ntool = "t"\nmax_calls = 1\ninterval_secs = 60\n');
    const a = new PolicyEngine();
    const b = new PolicyEngine();
    rules.apply(a);
    rules.apply(b);
    expect(a.check(toolAction("t"))).toEqual([]);
    expect(a.check(toolAction("t"))).toHaveLength(1);
    expect(b.check(toolAction("t"))).toEqual([]);
  });

  it("merge concatenates and len counts every rule", () => {
    const a = parsePolicyFile("a.toml", 'deny_tool = ["x", "y"]\ndeny_keyword = ["k"]\n');
    const b = parsePolicyFile("b.toml", '[[allow_tool_param]]\ntool = "t"\nparam = "p"\nallow = ["v"]\n');
    expect(a.len).toBe(3);
    a.merge(b);
    expect(a.len).toBe(4);
    expect(a.deny_tool).toEqual(["x", "y"]);
    expect(a.allow_tool_param).toEqual([{ tool: "t", param: "p", allow: ["v"] }]);
  });
});

describe("PolicyRules.patternErrors", () => {
  it("names each deny_tool_param_matching pattern that does not compile, and only those", () => {
    const rules = parsePolicyFile(
      "p.toml",
      '[[deny_tool_param_matching]]\ntool = "http"\nparam = "body"\nmatches = "("\n\n[[deny_tool_param_matching]]\ntool = "http"\nparam = "url"\nmatches = "(?i)^https://ok"\n',
    );
    const errors = rules.patternErrors();
    expect(errors.map((e) => [e.rule, e.pattern])).toEqual([["deny_tool_param_matching:http.body", "("]]);
    expect(errors[0]!.error.length).toBeGreaterThan(0);
  });
});
