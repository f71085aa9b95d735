/**
 * The smaller commands through the real CLI: the top-level help and
 * dispatch, `init`, `policy check`, `policy lint`, `simulate`, `optimize`
 * and `equivalent`.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;
let root: string;
let carHome: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-cmds-")));
  carHome = join(root, "car-home");
  mkdirSync(carHome);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("car", () => {
  it("lists its commands, and exits 2 for an unknown one", async () => {
    const help = await runCar(["--help"]);
    expect(help.code).toBe(0);
    for (const c of ["verify", "simulate", "optimize", "equivalent", "run", "init", "policy", "policy-check-hook", "mcp", "serve"])
      expect(help.stdout).toContain(`  ${c} `);
    const unknown = await runCar(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    const usage = await runCar(["verify", "--help"]);
    expect(usage.code).toBe(0);
    expect(usage.stdout).toContain("Usage: car verify");
    // `serve` is wired to the server module, which prints its own help.
    const serve = await runCar(["serve", "--help"]);
    expect(serve.code).toBe(0);
    expect(serve.stdout).toContain("Usage: car serve");
    expect(serve.stdout).toContain("--port");
  });
});

describe("car init and car policy", () => {
  it("creates .car/policies with enforced defaults and a commented example that enforces nothing", async () => {
    const project = join(root, "project");
    mkdirSync(project);
    const r = await runCar(["init", "--dir", project]);
    expect(r.code).toBe(0);
    const example = join(project, ".car", "policies", "example.toml");
    expect(r.stdout).toContain(`created ${example}`);
    const text = readFileSync(example, "utf8");
    for (const kind of ["deny_tool", "deny_keyword", "deny_tool_param", "allow_tool_param", "deny_tool_param_matching", "rate_limit_tool"])
      expect(text).toContain(kind);
    const lint = await runCar(["policy", "lint", join(project, ".car", "policies"), "--json"]);
    expect(lint.code).toBe(0);
    const linted = JSON.parse(lint.stdout) as { errors: number; directories: { files: { path: string; rule_count: number }[] }[] };
    expect(linted.errors).toBe(0);
    const counts = Object.fromEntries(linted.directories[0]!.files.map((f) => [f.path.split("/").at(-1), f.rule_count]));
    expect(counts["example.toml"]).toBe(0);
    expect(counts["defaults.toml"]).toBeGreaterThan(0);
    // A second init leaves the file as the user edited it.
    writeFileSync(example, 'deny_tool = ["x"]\n');
    const again = await runCar(["init"], { cwd: project });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already exists");
    expect(readFileSync(example, "utf8")).toBe('deny_tool = ["x"]\n');
  });

  it("the example's rules, uncommented, load, lint clean and deny the host tool calls they document", async () => {
    const project = join(root, "uncommented");
    mkdirSync(project);
    execFileSync("git", ["init", "-q", project]);
    await runCar(["init", "--dir", project]);
    const example = join(project, ".car", "policies", "example.toml");
    const rules = readFileSync(example, "utf8").replace(/^# (?=\[\[|[a-z_]+ = )/gm, "");
    writeFileSync(example, rules);
    for (const kind of ["deny_command", "MultiEdit", "WebFetch", "Bash"]) expect(rules).toContain(kind);
    const lint = await runCar(["policy", "lint", join(project, ".car", "policies"), "--json"]);
    expect(lint.code, lint.stdout).toBe(0);
    expect(JSON.parse(lint.stdout)).toMatchObject({ errors: 0, pattern_errors: 0, rule_problems: 0 });
    const env = { env: { CAR_HOME: carHome } };
    for (const [tool, params] of [
      ["Bash", { command: "git push origin +main" }],
      ["Bash", { command: "rm -r -f //" }],
      ["MultiEdit", { file_path: "src/../.env", edits: [] }],
      ["NotebookEdit", { notebook_path: "./.env", new_source: "" }],
      ["WebFetch", { url: "http://0xa9fea9fe/latest" }],
    ] as const) {
      const r = await runCar(["policy", "check", "--tool", tool, "--params", JSON.stringify(params), "--cwd", project], env);
      expect(r.code, `${tool} ${JSON.stringify(params)}: ${r.stdout}`).toBe(1);
    }
    const allowed = await runCar(["policy", "check", "--tool", "Bash", "--params", '{"command":"git push origin main"}', "--cwd", project], env);
    expect(allowed.code, allowed.stdout).toBe(0);
  }, 180_000);

  it("lint flags a deny_command rule that can never match", async () => {
    const dir = join(root, "never-matches");
    mkdirSync(dir);
    writeFileSync(join(dir, "rules.TOML"), '[[deny_command]]\nprogram = "rm"\nflags = ["-rf"]\n');
    const r = await runCar(["policy", "lint", dir, "--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { rule_problems: number; directories: { files: { rule_problems?: { error: string }[] }[] }[] };
    expect(out.rule_problems).toBe(1);
    expect(out.directories[0]?.files[0]?.rule_problems?.[0]?.error).toContain("cluster");
  });

  it("prints the gate's decision document for policy check, exit 1 on deny and 0 on allow", async () => {
    const repo = join(root, "gated");
    mkdirSync(join(repo, "sub"), { recursive: true });
    execFileSync("git", ["init", "-q", repo]);
    mkdirSync(join(repo, ".car", "policies"), { recursive: true });
    writeFileSync(join(repo, ".car", "policies", "rules.toml"), '[[deny_tool_param]]\ntool = "http_request"\nparam = "url"\ncontains = "169.254.169.254"\n');
    const deny = await runCar(
      ["policy", "check", "--tool", "http_request", "--params", '{"url":"http://169.254.169.254/latest"}', "--cwd", join(repo, "sub")],
      { env: { CAR_HOME: carHome } },
    );
    expect(deny.code).toBe(1);
    const doc = JSON.parse(deny.stdout);
    expect(doc).toMatchObject({ decision: "deny", basis: "denied_by_rule", tool: "http_request", rules_loaded: 1 });
    expect(doc.findings[0].rule).toBe("deny_tool_param:http_request.url");
    expect(doc.policy_sources.map((s: { path: string }) => s.path)).toContain(join(repo, ".car", "policies"));
    const allow = await runCar(["policy", "check", "--tool", "http_request", "--params", '{"url":"https://example.com"}'], {
      cwd: join(repo, "sub"),
      env: { CAR_HOME: carHome },
    });
    expect(allow.code).toBe(0);
    expect(JSON.parse(allow.stdout)).toMatchObject({ decision: "allow", basis: "passed_rules" });
    const bad = await runCar(["policy", "check", "--tool", "x", "--params", "{nope"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--params is not valid JSON");
    const notObject = await runCar(["policy", "check", "--tool", "http_request", "--params", '["http://169.254.169.254"]']);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain("--params must be a JSON object");
  });

  it("lints every rule by name, or names the file that does not load", async () => {
    const repo = join(root, "linted");
    mkdirSync(join(repo, "deep"), { recursive: true });
    execFileSync("git", ["init", "-q", repo]);
    const dir = join(repo, ".car", "policies");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "a.toml"),
      'deny_tool = ["rm", "deploy"]\ndeny_keyword = ["DROP TABLE"]\n[[rate_limit_tool]]\ntool = "http"\nmax_calls = 2\ninterval_secs = 1.0\n',
    );
    const ok = await runCar(["policy", "lint"], { cwd: join(repo, "deep"), env: { CAR_HOME: carHome } });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`${join(dir, "a.toml")}: 4 rules`);
    for (const name of ["deny_tool:rm", "deny_tool:deploy", "deny_keyword:DROP TABLE", "rate_limit_tool:http"]) expect(ok.stdout).toContain(name);
    writeFileSync(join(dir, "t.toml"), '[[trace_rule]]\nkind = "only_after"\ntool = "deploy"\nafter = "run_tests"\n');
    const traced = await runCar(["policy", "lint", dir]);
    expect(traced.code).toBe(0);
    expect(traced.stdout).toContain("trace_rule:only_after(deploy,run_tests)");
    writeFileSync(join(dir, "b.toml"), '[[trace_rule]]\nname = "x"\n');
    const broken = await runCar(["policy", "lint", dir]);
    expect(broken.code).toBe(2);
    expect(broken.stdout).toContain(`error policy file ${join(dir, "b.toml")}`);
    expect(broken.stdout).toContain("trace_rule");
    expect(broken.stdout).toContain("deny_tool:rm");
  });

  it("flags a regex that does not compile: the file loads, but the rule would deny every call to its tool", async () => {
    const dir = join(root, "bad-pattern");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "r.toml"), '[[deny_tool_param_matching]]\ntool = "http"\nparam = "body"\nmatches = "("\n');
    const linted = await runCar(["policy", "lint", dir]);
    expect(linted.code).toBe(1);
    expect(linted.stdout).toContain('deny_tool_param_matching:http.body: pattern "(" does not compile');
    const json = await runCar(["policy", "lint", dir, "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ errors: 0, pattern_errors: 1 });
  });
});

describe("car simulate, optimize and equivalent", () => {
  it("simulates from a state file, keeping a __proto__ key as plain data", async () => {
    const state = join(root, "state.json");
    writeFileSync(state, '{"approved": true, "__proto__": {"polluted": true}}');
    const r = await runCar(["simulate", fixture("findings.json"), "--state", state]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(["approved", "__proto__", "page", "cache"]);
    expect(Object.getOwnPropertyDescriptor(out, "__proto__")?.value).toEqual({ polluted: true });
    expect(out["cache"]).toBe(2);
  });

  it("optimizes away a phantom state dependency without reordering", async () => {
    const p = join(root, "phantom.json");
    writeFileSync(
      p,
      JSON.stringify({
        id: "phantom00001",
        actions: [
          { id: "a", type: "state_write", parameters: { key: "x", value: 1 } },
          { id: "b", type: "state_write", parameters: { key: "y", value: 2 }, state_dependencies: ["ghost"] },
        ],
      }),
    );
    const r = await runCar(["optimize", p]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.actions.map((a: { id: string }) => a.id)).toEqual(["a", "b"]);
    expect(out.actions[1].state_dependencies ?? []).toEqual([]);
    expect(out.actions[1].preconditions).toEqual([expect.objectContaining({ key: "ghost", operator: "exists" })]);
  });

  it("compares two proposals, exit 0 when equivalent and 1 naming the difference", async () => {
    const write = (name: string, value: number) => {
      const file = join(root, name);
      writeFileSync(file, JSON.stringify({ actions: [{ id: "w", type: "state_write", parameters: { key: "z", value }, expected_effects: { z: value } }] }));
      return file;
    };
    const a = write("a.json", 1);
    const b = write("b.json", 2);
    const same = await runCar(["equivalent", a, a]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain("equivalent on all 2 test states");
    const differ = await runCar(["equivalent", a, b, "--json"]);
    expect(differ.code).toBe(1);
    expect(JSON.parse(differ.stdout)).toMatchObject({ equivalent: false, probes: 2, difference: { probe_index: 0, key: "z", left: 1, right: 2 } });
    const states = join(root, "states.json");
    writeFileSync(states, JSON.stringify([{ q: 1 }, { q: 2 }, { q: 3 }]));
    const probed = await runCar(["equivalent", a, a, "--states", states]);
    expect(probed.stdout).toContain("all 3 test states");
    writeFileSync(states, '{"not": "a list"}');
    const bad = await runCar(["equivalent", a, b, "--states", states]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("must be a JSON array of objects");
  });
});
