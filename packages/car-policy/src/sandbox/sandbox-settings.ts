/**
 * A loaded policy as `@anthropic-ai/sandbox-runtime`'s configuration, so the
 * boundary an OS sandbox draws is the one the policy files already state.
 * Plain data in that package's shape: this package does not depend on it,
 * the runners that start the sandbox do (`apps/cli/src/sandbox/`).
 *
 * - Network: only the allowed hosts, each with its subdomains (the egress
 *   guard's meaning); everything else is refused by the sandbox's proxy,
 *   never asked about (`strictAllowlist`).
 * - Writes: the workspace (the outermost work tree holding `cwd`, else
 *   `cwd`) and the temporary directory, minus the protected paths: every
 *   path a `deny_tool_param` rule keeps the file-writing tools from, the
 *   policy directories and `CAR_HOME` (so a command cannot loosen the policy
 *   that confines it), the host's hook settings, and the runner's own files.
 * - Reads: everything, minus the paths a `deny_tool_param` rule keeps the
 *   file-reading tools from.
 */
import { existsSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { PolicyRules } from "../files/policy-rules.ts";
import { DEFAULT_ALLOWED_HOSTS } from "../inspectors/egress/egress-inspector.ts";

/** Off: no file asks. On: sandbox where it can start, say so and fall back where not. Required: refuse where not. */
export type SandboxMode = "off" | "on" | "required";

/** A path the sandbox takes as that path only, never as a pattern, whether or not it exists yet. */
export interface LiteralPath {
  path: string;
  literal: true;
}

/** The subset of sandbox-runtime's `SandboxRuntimeConfig` a policy decides. */
export interface SandboxSettings {
  network: { allowedDomains: string[]; deniedDomains: string[]; strictAllowlist: true };
  filesystem: { denyRead: LiteralPath[]; allowWrite: LiteralPath[]; denyWrite: LiteralPath[] };
}

export interface SandboxPlace {
  /** Where the command runs. */
  cwd: string;
  /** The policy directories the rules were read from. */
  policyDirs: readonly string[];
  /** The operator's state root (`CAR_HOME`). */
  carHome: string;
  /** The runner's own files (car, sandbox-runtime): a sandboxed command must not rewrite what starts the next one. */
  runnerPaths?: readonly string[];
}

/** The tools whose `deny_tool_param` path rules protect a path from writes, and the parameters that hold it. */
const WRITE_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch", "write_file", "edit_file"]);
const READ_TOOLS = new Set(["Read", "read_file"]);
const PATH_PARAMS = new Set(["file_path", "notebook_path", "path"]);
/** Where the hosts keep the hook that runs this gate: a command must not be able to unhook it. */
const HOST_SETTINGS = [".claude/settings.json", ".claude/settings.local.json", ".codex"];

export function sandboxMode(rules: PolicyRules): SandboxMode {
  if (rules.sandbox.some((s) => s.required)) return "required";
  return rules.sandbox.length > 0 ? "on" : "off";
}

/**
 * The hosts commands may reach. Each file that lists hosts is an allowlist
 * of its own, so a host must be on every list (merging only narrows, like
 * every other rule); when no file lists any, the egress guard's default.
 */
export function sandboxHosts(rules: PolicyRules): string[] {
  const lists = rules.sandbox.flatMap((s) => (s.allowed_hosts === undefined ? [] : [s.allowed_hosts]));
  if (lists.length === 0) return [...DEFAULT_ALLOWED_HOSTS];
  const [first, ...rest] = lists;
  return [...new Set(first!.filter((host) => rest.every((list) => list.includes(host))))];
}

export function sandboxSettings(rules: PolicyRules, place: SandboxPlace): SandboxSettings {
  const cwd = resolve(place.cwd);
  const root = workspaceRoot(cwd);
  const denyRead = new Set<string>();
  const denyWrite = new Set<string>();
  for (const r of rules.deny_tool_param) {
    if (!PATH_PARAMS.has(r.param)) continue;
    const into = WRITE_TOOLS.has(r.tool) ? denyWrite : READ_TOOLS.has(r.tool) ? denyRead : undefined;
    if (into === undefined) continue;
    if (typeof r.equals === "string") for (const p of pathsOf(r.equals, [cwd])) into.add(p);
    // A substring of any path: protected as that path under the workspace and the working directory.
    if (r.contains !== undefined) for (const p of pathsOf(r.contains.replace(/^\/+/, ""), [root, cwd])) into.add(p);
    if (r.contains !== undefined && isAbsolute(r.contains)) for (const p of pathsOf(r.contains, [])) into.add(p);
  }
  // Existing ones only: a new policy file can only narrow (every rule denies, host lists intersect).
  const guarded = [...place.policyDirs, place.carHome, ...HOST_SETTINGS.flatMap((s) => [join(root, s), join(homedir(), s)]), ...(place.runnerPaths ?? [])];
  for (const p of guarded) if (existsSync(p)) denyWrite.add(resolve(p));
  return {
    network: { allowedDomains: sandboxHosts(rules).flatMap(domainPatterns), deniedDomains: [], strictAllowlist: true },
    filesystem: {
      denyRead: [...denyRead].map(literal),
      allowWrite: [...new Set([root, tmpdir()])].map(literal),
      denyWrite: [...denyWrite].map(literal),
    },
  };
}

/** The outermost enclosing work tree's root (the highest directory holding `.git`), else `cwd` itself. */
export function workspaceRoot(cwd: string): string {
  let found = cwd;
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) found = dir;
    if (dirname(dir) === dir) return found;
  }
}

/** A host as the proxy's patterns: a name also covers its subdomains, as in the egress guard's allowlist. */
function domainPatterns(host: string): string[] {
  if (host.startsWith("*.") || host.startsWith("[") || /^[0-9.]+(:\d+)?$/.test(host)) return [host];
  return [host, `*.${host}`];
}

/**
 * The paths a rule's value names: an absolute path as it is, a relative one
 * under each base. (`contains = ".env"` protects the workspace's and the
 * working directory's `.env`; the reader still judges every other spelling.)
 */
function pathsOf(value: string, bases: readonly string[]): string[] {
  if (value.trim() === "" || value.includes("\0")) return [];
  if (isAbsolute(value)) return [resolve(value)];
  return bases.map((base) => resolve(base, value));
}

function literal(path: string): LiteralPath {
  return { path, literal: true };
}
