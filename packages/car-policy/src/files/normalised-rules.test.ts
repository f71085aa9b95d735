/** `PolicyRules.apply`: keyword, `contains` and regex rules see the normalised call in `PolicyEngine.check` (DECISIONS §17). */
import { describe, expect, it } from "vitest";
import { PolicyEngine } from "../engine.ts";
import { toolAction } from "../test-helpers.ts";
import { parsePolicyFile } from "./parse-policy-file.ts";

function engineFor(toml: string): PolicyEngine {
  const engine = new PolicyEngine();
  parsePolicyFile("rules.toml", toml).apply(engine);
  return engine;
}

const denied = (engine: PolicyEngine, tool: string, params: Record<string, string | string[]>) =>
  engine.check(toolAction(tool, params)).map((v) => v.policy_name);

describe("PolicyEngine.check with file rules on commands", () => {
  it("a keyword on rm -rf / denies its respellings, under the keyword's own name", () => {
    const engine = engineFor('deny_keyword = ["rm -rf /"]');
    for (const command of ["rm -r -f /", "rm -fr /", 'rm -rf "/"', "rm  -rf  /", "r''m -rf /", "sudo rm -r -f /"]) {
      expect(denied(engine, "shell", { command }), command).toEqual(["deny_keyword:rm -rf /"]);
    }
    expect(denied(engine, "codex", { command: ["bash", "-lc", "rm -r -f /"] })).toEqual(["deny_keyword:rm -rf /"]);
    for (const command of ["rm -rf ./build", "ls -rf /", "echo rm"]) expect(denied(engine, "shell", { command }), command).toEqual([]);
  });

  it("contains and non-negated regex rules on curl deny c''url, c\\url and \"cu\"rl; a negated regex sees only the call as sent", () => {
    const engine = engineFor(
      [
        '[[deny_tool_param]]\ntool = "shell"\nparam = "command"\ncontains = "curl"',
        '[[deny_tool_param_matching]]\ntool = "shell"\nparam = "command"\nmatches = "^curl "',
        '[[deny_tool_param_matching]]\ntool = "shell"\nparam = "command"\nmatches = "^(ls|c\'\'url)"\nnegate = true',
      ].join("\n"),
    );
    for (const command of ["c''url https://x.example", "c\\url https://x.example", '"cu"rl https://x.example']) {
      const names = denied(engine, "shell", { command });
      expect(names.slice(0, 2), command).toEqual(["deny_tool_param:shell.command", "deny_tool_param_matching:shell.command"]);
      // The negated rule allows what starts with ls or c''url as sent: its normalised form (`curl …`) would not.
      expect(names.length, command).toBe(command.startsWith("c''url") ? 2 : 3);
    }
    expect(denied(engine, "shell", { command: "ls -la" })).toEqual([]);
    expect(denied(engine, "other", { command: "c''url https://x.example" })).toEqual([]);
  });

  it("a URL rule sees the host in canonical spelling, a plain URL as it is", () => {
    const engine = engineFor('[[deny_tool_param]]\ntool = "fetch"\nparam = "url"\ncontains = "://169.254.169.254/"');
    expect(denied(engine, "fetch", { url: "http://0xa9fea9fe/latest" })).toEqual(["deny_tool_param:fetch.url"]);
    expect(denied(engine, "fetch", { url: "http://169.254.169.254/latest" })).toEqual(["deny_tool_param:fetch.url"]);
    expect(denied(engine, "fetch", { url: "https://api.example.org/v1" })).toEqual([]);
  });
});
