/**
 * The `sandbox` key and the policy → sandbox-runtime configuration, on real
 * policy files in a temporary git repository.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPolicyDir } from "../files/load-policy-dir.ts";
import { parsePolicyFile } from "../files/parse-policy-file.ts";
import { PolicyLoadError } from "../files/policy-load-error.ts";
import { PolicyRules } from "../files/policy-rules.ts";
import { DEFAULT_ALLOWED_HOSTS } from "../inspectors/egress/egress-inspector.ts";
import { sandboxHosts, sandboxMode, sandboxSettings, workspaceRoot } from "./sandbox-settings.ts";

let root: string;
let repo: string;
let carHome: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-sandbox-settings-")));
  repo = join(root, "repo");
  carHome = join(root, "home");
  mkdirSync(join(repo, "app", ".car", "policies"), { recursive: true });
  mkdirSync(join(repo, ".car", "policies"), { recursive: true });
  mkdirSync(join(carHome, "policies"), { recursive: true });
  execFileSync("git", ["init", "-q", repo]);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const parse = (text: string) => parsePolicyFile("p.toml", text);
const paths = (entries: { path: string }[]) => entries.map((e) => e.path);

describe("the sandbox key", () => {
  it('reads true, "required", false and a [sandbox] table', () => {
    expect(parse("sandbox = true\n").sandbox).toEqual([{ required: false }]);
    expect(parse('sandbox = "required"\n').sandbox).toEqual([{ required: true }]);
    expect(parse("sandbox = false\n").sandbox).toEqual([]);
    expect(parse('[sandbox]\nrequired = true\nallowed_hosts = ["Registry.npmjs.org", "127.0.0.1:8080", "*.example.com", "[::1]:3000"]\n').sandbox).toEqual([
      { required: true, allowed_hosts: ["registry.npmjs.org", "127.0.0.1:8080", "*.example.com", "[::1]:3000"] },
    ]);
  });

  it("merges to the strictest mode: any file asking turns it on, any requiring requires it", () => {
    const rules = new PolicyRules().merge(parse("sandbox = false\n"));
    expect(sandboxMode(rules)).toBe("off");
    rules.merge(parse("sandbox = true\n"));
    expect(sandboxMode(rules)).toBe("on");
    rules.merge(parse("sandbox = false\n"));
    expect(sandboxMode(rules)).toBe("on");
    rules.merge(parse('sandbox = "required"\n'));
    expect(sandboxMode(rules)).toBe("required");
  });

  const BAD: [string, RegExp][] = [
    ['sandbox = "yes"\n', /sandbox must be true, false, "required" or a \[sandbox\] table/],
    ["sandbox = 1\n", /sandbox must be/],
    ["sandbox = [true]\n", /sandbox must be/],
    ["[sandbox]\nrequire = true\n", /unknown key 'require' in sandbox/],
    ['[sandbox]\nrequired = "true"\n', /sandbox.required must be a boolean/],
    ['[sandbox]\nallowed_hosts = "github.com"\n', /sandbox.allowed_hosts must be an array of strings/],
    ['[sandbox]\nallowed_hosts = ["https://github.com/"]\n', /'https:\/\/github.com\/' is not a host/],
    ['[sandbox]\nallowed_hosts = ["127.0.0.1:70000"]\n', /is not a host/],
  ];
  for (const [text, message] of BAD) {
    it(`refuses ${JSON.stringify(text)} with a PolicyLoadError naming the file`, () => {
      let error: unknown;
      try {
        parse(text);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(PolicyLoadError);
      expect((error as PolicyLoadError).file).toBe("p.toml");
      expect((error as Error).message).toMatch(message);
    });
  }

  it("refuses any allowed_hosts entry carrying a scheme, a path, whitespace or a quote, and never throws anything else", () => {
    const junk = fc.tuple(fc.string(), fc.constantFrom("://", "/", " ", "\t", '"', "?", "@"), fc.string()).map(([a, b, c]) => a + b + c);
    fc.assert(
      fc.property(junk, (host) => {
        const text = `[sandbox]\nallowed_hosts = [${JSON.stringify(host)}]\n`;
        expect(() => parse(text)).toThrow(PolicyLoadError);
      }),
    );
  });

  it("accepts every name, wildcard name and IPv4 address with or without a port", () => {
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
    const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join("."));
    const host = fc
      .tuple(fc.boolean(), name, fc.option(fc.integer({ min: 1, max: 65_535 })))
      .map(([wild, n, port]) => `${wild ? "*." : ""}${n}${port === null ? "" : `:${port}`}`);
    fc.assert(
      fc.property(host, (h) => {
        expect(parse(`[sandbox]\nallowed_hosts = [${JSON.stringify(h)}]\n`).sandbox[0]!.allowed_hosts).toEqual([h]);
      }),
    );
  });
});

describe("sandboxSettings", () => {
  it("allows the egress guard's hosts, with their subdomains, when no file lists hosts", () => {
    const rules = parse("sandbox = true\n");
    expect(sandboxHosts(rules)).toEqual([...DEFAULT_ALLOWED_HOSTS]);
    const { network } = sandboxSettings(rules, { cwd: repo, policyDirs: [], carHome });
    expect(network.allowedDomains).toContain("github.com");
    expect(network.allowedDomains).toContain("*.github.com");
    expect(network.strictAllowlist).toBe(true);
  });

  it("keeps only the hosts every listing file allows: merging narrows", () => {
    writeFileSync(join(carHome, "policies", "net.toml"), '[sandbox]\nallowed_hosts = ["registry.npmjs.org", "github.com", "127.0.0.1:8080"]\n');
    writeFileSync(join(repo, ".car", "policies", "net.toml"), '[sandbox]\nallowed_hosts = ["github.com", "127.0.0.1:8080", "evil.example"]\n');
    const rules = loadPolicyDir(join(carHome, "policies")).merge(loadPolicyDir(join(repo, ".car", "policies")));
    expect(sandboxHosts(rules)).toEqual(["github.com", "127.0.0.1:8080"]);
    const { network } = sandboxSettings(rules, { cwd: repo, policyDirs: [], carHome });
    // An address stays an address: "*.127.0.0.1" would be no host at all.
    expect(network.allowedDomains).toEqual(["github.com", "*.github.com", "127.0.0.1:8080"]);
  });

  it("protects the paths file rules protect, the policy directories and CAR_HOME; writes go to the workspace and the temp dir", () => {
    const rules = parse(
      [
        "sandbox = true",
        "[[deny_tool_param]]",
        'tool = "Write"',
        'param = "file_path"',
        'contains = ".env"',
        "[[deny_tool_param]]",
        'tool = "Edit"',
        'param = "file_path"',
        `equals = ${JSON.stringify(join(repo, "config", "prod.json"))}`,
        "[[deny_tool_param]]",
        'tool = "Read"',
        'param = "file_path"',
        'equals = "secrets/key.pem"',
        "[[deny_tool_param]]",
        'tool = "Bash"',
        'param = "command"',
        'contains = "curl"',
        "",
      ].join("\n"),
    );
    const cwd = join(repo, "app");
    const dirs = [join(carHome, "policies"), join(repo, ".car", "policies"), join(cwd, ".car", "policies"), join(cwd, "nowhere", ".car", "policies")];
    const { filesystem } = sandboxSettings(rules, { cwd, policyDirs: dirs, carHome });
    expect(paths(filesystem.allowWrite)).toEqual([repo, tmpdir()]);
    expect(paths(filesystem.denyWrite)).toEqual(
      expect.arrayContaining([join(repo, ".env"), join(cwd, ".env"), join(repo, "config", "prod.json"), ...dirs.slice(0, 3), carHome]),
    );
    // A policy directory that does not exist is not made: a file created there can only narrow.
    expect(paths(filesystem.denyWrite)).not.toContain(dirs[3]);
    // A command rule names no path.
    expect(paths(filesystem.denyWrite).some((p) => p.includes("curl"))).toBe(false);
    expect(paths(filesystem.denyRead)).toEqual([join(cwd, "secrets", "key.pem")]);
    for (const entry of [...filesystem.allowWrite, ...filesystem.denyWrite, ...filesystem.denyRead]) expect(entry.literal).toBe(true);
  });

  it("finds the workspace as the outermost work tree, else the directory itself", () => {
    mkdirSync(join(repo, "app", "nested"), { recursive: true });
    execFileSync("git", ["init", "-q", join(repo, "app", "nested")]);
    expect(workspaceRoot(join(repo, "app", "nested"))).toBe(repo);
    mkdirSync(join(root, "loose"), { recursive: true });
    expect(workspaceRoot(join(root, "loose"))).toBe(join(root, "loose"));
  });
});
