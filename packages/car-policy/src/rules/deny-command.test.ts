import { describe, expect, it } from "vitest";
import { PolicyEngine } from "../engine.ts";
import { parsePolicyFile } from "../files/parse-policy-file.ts";
import { PolicyLoadError } from "../files/policy-load-error.ts";
import { toolAction } from "../test-helpers.ts";
import { argvToCommand, type DenyCommandSpec, denyCommandRule } from "./deny-command.ts";

function denies(spec: DenyCommandSpec, command: string | string[], tool = "Bash"): boolean {
  const engine = new PolicyEngine();
  engine.register(denyCommandRule(spec));
  return engine.check(toolAction(tool, { command })).length > 0;
}

const forcePush: DenyCommandSpec = { program: "git", subcommand: "push", flags: ["--force|-f|--force-with-lease|+refspec"] };
const rmRoot: DenyCommandSpec = { program: "rm", flags: ["-r|-R|--recursive", "-f|--force"], args: ["/"] };

describe("deny_command", () => {
  it("denies a force push in every spelling", () => {
    for (const command of [
      "git push --force",
      "git push origin main -f",
      "git push -fu origin main",
      "git push origin +main",
      "git push origin +HEAD:main",
      "git -C repo push --force-with-lease=main",
      "g''it push -f",
      "sudo git push -f",
      "bash -c 'git push -f'",
      "echo $(git push -f)",
      "/usr/bin/GIT push -f",
    ]) {
      expect(denies(forcePush, command), command).toBe(true);
    }
    for (const command of [
      "git push",
      "git push origin main",
      "git fetch -f",
      "git commit -m 'push -f later'",
      "echo git push -f",
      "git push origin feature/force",
    ]) {
      expect(denies(forcePush, command), command).toBe(false);
    }
  });

  it("denies rm with r and f on / however the flags and path are written", () => {
    for (const command of [
      "rm -rf /",
      "rm -r -f /",
      "rm -fr /",
      "rm -Rf /",
      "rm --recursive --force /",
      'rm -rf "/"',
      "rm -rf //",
      "rm -rf /.",
      "rm -rf /*",
      "rm -rf -- /",
      "rm -rf /tmp/..",
    ]) {
      expect(denies(rmRoot, command), command).toBe(true);
    }
    for (const command of ["rm -rf ./build", "rm -r /", "rm -f /", "rm -rf /tmp", "rm -rf -- -/"]) {
      expect(denies(rmRoot, command), command).toBe(false);
    }
  });

  it("reads a Codex argv command", () => {
    expect(denies(forcePush, ["bash", "-lc", "git push -f"])).toBe(true);
    expect(denies(forcePush, ["git", "push", "-f"])).toBe(true);
    expect(denies(forcePush, ["git", "push"])).toBe(false);
    expect(argvToCommand(["echo", "a b", "it's"])).toBe("echo 'a b' 'it'\\''s'");
  });

  it("limits itself to one tool and parameter when asked", () => {
    const spec: DenyCommandSpec = { ...forcePush, tool: "shell", param: "cmd" };
    const engine = new PolicyEngine();
    engine.register(denyCommandRule(spec));
    expect(engine.check(toolAction("shell", { cmd: "git push -f" }))).toHaveLength(1);
    expect(engine.check(toolAction("Bash", { cmd: "git push -f" }))).toHaveLength(0);
    expect(engine.check(toolAction("shell", { command: "git push -f" }))).toHaveLength(0);
  });

  it("loads from a policy file strictly, and flags rules that can never match", () => {
    const rules = parsePolicyFile(
      "p.toml",
      '[[deny_command]]\nprogram = "git"\nsubcommand = "push"\nflags = ["-f|--force"]\n[[deny_command]]\nprogram = "rm"\nflags = ["-rf"]\n',
    );
    expect(rules.deny_command).toHaveLength(2);
    expect(rules.len).toBe(2);
    expect(rules.commandRuleProblems()).toEqual([{ rule: "deny_command:rm", error: "flag '-rf' is a cluster; list each short flag on its own ('-r', '-f')" }]);
    expect(() => parsePolicyFile("p.toml", '[[deny_command]]\nprogram = "git"\nflag = ["-f"]\n')).toThrow(PolicyLoadError);
    expect(() => parsePolicyFile("p.toml", '[[deny_command]]\nsubcommand = "push"\n')).toThrow(/program is required/);
  });
});
