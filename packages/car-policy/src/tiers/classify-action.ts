/**
 * Risk classification: the minimum permission tier an action needs, and its
 * likely rollback contract. The tier is the highest any of five signals
 * implies, each read from the part of the action that carries that evidence:
 *
 * 1. the tool name, by whole `snake`/`camel` segments (`send_email`, `readSecret`);
 * 2. the command line only (`command`/`args`/`argv`/`flags`), with the shell
 *    reader, so `curl` inside a commit message is not a `curl` run;
 * 3. parameter keys naming a credential (`api_key`, a nested `auth.token`);
 * 4. declared target paths (`path`, `file`, `dest`, …) at sensitive locations;
 * 5. a narrow list of always-dangerous phrases anywhere in the parameters.
 *
 * No signal scans arbitrary values for common words: a URL is not "http
 * access", a message body saying "send" sends nothing. These are conservative
 * keyword heuristics, and the reasons say which signal fired.
 */
import type { Action, ActionProposal, JsonValue, Reversibility, ToolSchema } from "@car/ir";
import { missingRequiredCompensation, rollbackContract } from "@car/ir";
import { invocationsOf } from "../inspectors/egress/command-position.ts";
import { maxTier, type PermissionTier } from "./permission-tier.ts";

export interface ActionClassification {
  action_id: string;
  tool: string | null;
  /** The minimum tier that may authorize the action. */
  tier: PermissionTier;
  /** One line per signal that raised the tier. */
  reasons: string[];
  /** What the classifier infers: can the effect be undone. */
  reversibility: Reversibility;
  /** Declared `compensable` without a `compensation`. */
  missing_compensation: boolean;
  /** What the action declares in the IR (`reversibility`, default `irreversible`). */
  declared_rollback_contract: Reversibility;
}

/** `permission.classify`'s wire shape for a whole proposal. */
export interface ProposalClassification {
  classifications: {
    action_id: string;
    tool: string | null;
    required_tier: PermissionTier;
    reversibility: Reversibility;
    missing_compensation: boolean;
  }[];
  /** The worst declared contract over the actions that run forward (`rollbackContract`); an empty proposal is `reversible`. */
  declared_rollback_contract: Reversibility;
}

const FULL_ACCESS_SEGMENTS = new Set([
  "deploy",
  "send",
  "email",
  "mail",
  "sms",
  "publish",
  "push",
  "pay",
  "payment",
  "charge",
  "transfer",
  "purchase",
  "buy",
  "secret",
  "secrets",
  "credential",
  "credentials",
  "password",
  "token",
  "keychain",
  "drop",
  "destroy",
  "terminate",
  "tweet",
  "refund",
  "sudo",
]);
const SANDBOX_SEGMENTS = new Set([
  "write",
  "edit",
  "create",
  "update",
  "insert",
  "patch",
  "apply",
  "move",
  "rename",
  "mkdir",
  "save",
  "set",
  "put",
  "append",
  "delete",
  "remove",
  "rm",
  "install",
  "commit",
  "exec",
  "execute",
  "run",
  "shell",
  "bash",
  "command",
  "upload",
  "copy",
  "cp",
  "mv",
  "replace",
  "modify",
  "add",
]);
const READ_SEGMENTS = new Set([
  "read",
  "get",
  "list",
  "ls",
  "search",
  "query",
  "find",
  "view",
  "show",
  "stat",
  "grep",
  "glob",
  "fetch",
  "browse",
  "lookup",
  "describe",
  "inspect",
  "status",
  "diff",
  "log",
  "cat",
  "head",
  "tail",
  "count",
  "check",
  "verify",
]);

const EXEC_SEGMENTS = new Set(["shell", "bash", "exec", "execute", "run", "command"]);

/** Programs and sub-commands that reach outside the sandbox. */
const FULL_ACCESS_COMMANDS = [
  /^(curl|wget|ssh|scp|sftp|nc|ncat|netcat|socat|telnet|ftp|su)(\s|$)/,
  /^git (push|reset)\b/,
  /^(terraform|tofu) (apply|destroy)\b/,
  /^(kubectl|helm) (apply|delete|create|replace|patch|install|upgrade|uninstall|rollout)\b/,
  /^(aws|gcloud|az|doctl|flyctl|heroku|vercel|netlify)\b/,
  /^(docker|podman) (push|login)\b/,
  /^(npm|pnpm|yarn|cargo|twine|gem) publish\b/,
  /^gh (pr merge|release|repo delete|api)\b/,
];
/** Programs that only read. A command line made only of these is `read_only`. */
const READ_ONLY_PROGRAMS = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "grep",
  "rg",
  "ag",
  "find",
  "fd",
  "pwd",
  "echo",
  "printf",
  "wc",
  "stat",
  "file",
  "which",
  "whereis",
  "whoami",
  "id",
  "date",
  "uname",
  "env",
  "printenv",
  "tree",
  "du",
  "df",
  "ps",
  "diff",
  "sort",
  "uniq",
  "cut",
  "tr",
  "jq",
  "true",
  "false",
  "test",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "sha256sum",
  "md5sum",
  "shasum",
]);
const READ_ONLY_GIT = /^git (status|diff|log|show|branch|rev-parse|ls-files|blame|describe|remote -v)\b/;

const COMMAND_KEYS = new Set(["command", "cmd", "args", "argv", "flags"]);
const PATH_KEYS = new Set(["path", "file", "file_path", "filepath", "filename", "dest", "destination", "target", "to_path", "output", "dir", "directory"]);
const SENSITIVE_PATHS = [
  /(^|\/)\.ssh(\/|$)/,
  /(^|\/)\.aws\/credentials$/,
  /(^|\/)\.gnupg(\/|$)/,
  /\.pem$/,
  /\.p12$/,
  /(^|\/)id_(rsa|ed25519|ecdsa|dsa)$/,
  /(^|\/)\.env(\.|$)/,
  /^\/etc\//,
  /(^|\/)\.kube\/config$/,
  /(^|\/)\.netrc$/,
  /(^|\/)\.npmrc$/,
];
const DANGEROUS_PHRASES = ["drop table", "drop database", "delete from", "truncate table", "rm -rf", "git reset --hard", "mkfs", "dd if=", ":(){"];

/** Classifies one action. `schema`, when given, adds its declared path-typed parameters to the path signal. */
export function classifyAction(action: Action, schema?: ToolSchema): ActionClassification {
  const reasons: string[] = [];
  let tier: PermissionTier = "read_only";
  const raise = (to: PermissionTier, why: string) => {
    tier = maxTier(tier, to);
    reasons.push(`${to}: ${why}`);
  };
  const declared = action.reversibility ?? "irreversible";
  const base = {
    action_id: action.id,
    tool: action.tool ?? null,
    missing_compensation: missingRequiredCompensation(action),
    declared_rollback_contract: declared,
  };

  if (action.type === "state_write") raise("sandbox_edit", "writes runtime state");
  if (action.type !== "tool_call") {
    // State lives in the runtime's own store, which a rollback restores.
    return { ...base, tier, reasons, reversibility: "reversible" };
  }

  const tool = action.tool ?? "";
  const params = action.parameters;
  // For a tool that runs a command line (`shell`, `run_command`), the command says what it does, not the name.
  const runsCommand = Object.keys(params).some((k) => COMMAND_KEYS.has(k.toLowerCase()));
  const segments = nameSegments(tool);
  const full = segments.find((s) => FULL_ACCESS_SEGMENTS.has(s));
  const edit = segments.find((s) => SANDBOX_SEGMENTS.has(s) && !(runsCommand && EXEC_SEGMENTS.has(s)));
  const read = segments.find((s) => READ_SEGMENTS.has(s));
  if (full) raise("full_access", `tool name segment '${full}'`);
  else if (edit) raise("sandbox_edit", `tool name segment '${edit}'`);
  else if (!read && !runsCommand) raise("sandbox_edit", "a tool with no read-only name is assumed to change something");

  for (const key of Object.keys(params)) {
    if (!COMMAND_KEYS.has(key.toLowerCase())) continue;
    commandSignal(flattenText(params[key] as JsonValue), raise);
  }
  for (const path of keyPaths(params)) {
    const segs = nameSegments(path[path.length - 1] as string);
    const joined = segs.join("");
    if (
      segs.some((s) => ["password", "passwd", "secret", "token", "credential", "credentials", "apikey"].includes(s)) ||
      joined.includes("apikey") ||
      (segs.includes("private") && segs.includes("key")) ||
      (segs.includes("api") && segs.includes("key"))
    ) {
      raise("full_access", `parameter key '${path.join(".")}' names a credential`);
    }
  }
  const pathKeys = new Set(PATH_KEYS);
  for (const [name, prop] of Object.entries(schemaProperties(schema))) {
    if (typeof prop === "object" && prop !== null && (prop as { format?: unknown }).format === "path") pathKeys.add(name.toLowerCase());
  }
  for (const key of Object.keys(params)) {
    const value = params[key];
    if (!pathKeys.has(key.toLowerCase()) || typeof value !== "string") continue;
    if (SENSITIVE_PATHS.some((re) => re.test(value))) raise("full_access", `parameter '${key}' targets a sensitive path`);
  }
  const flat = flattenText(params).toLowerCase();
  const phrase = DANGEROUS_PHRASES.find((p) => flat.includes(p));
  if (phrase) raise("full_access", `parameters contain '${phrase}'`);

  return { ...base, tier, reasons, reversibility: classifyReversibility(segments, flat) };
}

/** `permission.classify` over a proposal. */
export function classifyProposal(proposal: Pick<ActionProposal, "actions">): ProposalClassification {
  const rows = proposal.actions.map((a) => classifyAction(a));
  return {
    classifications: rows.map((r) => ({
      action_id: r.action_id,
      tool: r.tool,
      required_tier: r.tier,
      reversibility: r.reversibility,
      missing_compensation: r.missing_compensation,
    })),
    // The same contract `verify` reports: compensation actions never run forward, so they are not part of it.
    declared_rollback_contract: rollbackContract(proposal),
  };
}

function commandSignal(command: string, raise: (to: PermissionTier, why: string) => void): void {
  if (command.trim() === "") return;
  // Wrappers are peeled off to find the program, so privilege escalation is read from the text itself.
  const escalation = /(^|[;&|(\s])(sudo|doas)\s/.exec(command);
  if (escalation) raise("full_access", `the command runs '${escalation[2]}'`);
  let onlyReads = true;
  for (const inv of invocationsOf(command)) {
    const line = [inv.program, ...inv.args.map((w) => w.text)].join(" ");
    const hit = FULL_ACCESS_COMMANDS.find((re) => re.test(line));
    if (hit) raise("full_access", `the command runs '${line.split(" ").slice(0, 2).join(" ")}'`);
    if (!READ_ONLY_PROGRAMS.has(inv.program) && !READ_ONLY_GIT.test(line)) onlyReads = false;
    if (inv.redirects.some((r) => r.op.includes(">") && r.target.text !== "/dev/null" && !/^\d$/.test(r.target.text))) onlyReads = false;
  }
  if (!onlyReads) raise("sandbox_edit", "the command runs programs that can change files");
}

/** Heuristic rollback contract over the tool name and parameters; an unrecognised tool is `irreversible`. */
function classifyReversibility(segments: string[], flat: string): Reversibility {
  const has = (...words: string[]) => segments.some((s) => words.includes(s));
  if (
    has("send", "email", "mail", "sms", "pay", "payment", "charge", "transfer", "purchase", "buy", "publish", "tweet", "drop", "destroy") ||
    DANGEROUS_PHRASES.some((p) => flat.includes(p))
  ) {
    return "irreversible";
  }
  if (has("deploy", "push", "insert", "create", "commit", "merge", "release", "upload", "install", "delete", "remove")) return "compensable";
  if (
    has(
      "read",
      "get",
      "list",
      "search",
      "query",
      "find",
      "view",
      "show",
      "stat",
      "fetch",
      "write",
      "edit",
      "update",
      "set",
      "save",
      "mkdir",
      "move",
      "rename",
      "secret",
    )
  )
    return "reversible";
  return "irreversible";
}

/** `send_email`, `sendEmail`, `messaging.send`, `read-secret` → lowercase words. */
function nameSegments(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .split(/[^A-Za-z0-9]+/)
    .filter((s) => s !== "")
    .map((s) => s.toLowerCase());
}

/** Every key path in nested parameters (`auth.token` as `["auth", "token"]`). */
function keyPaths(value: JsonValue, prefix: string[] = [], depth = 0): string[][] {
  if (typeof value !== "object" || value === null || depth > 32) return [];
  if (Array.isArray(value)) return value.flatMap((v) => keyPaths(v, prefix, depth + 1));
  return Object.keys(value).flatMap((k) => [[...prefix, k], ...keyPaths(value[k] as JsonValue, [...prefix, k], depth + 1)]);
}

/** All strings in a value, space-joined (keys excluded: a key is not content). */
function flattenText(value: JsonValue, depth = 0): string {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null || depth > 32) return value === null ? "" : String(value);
  const parts = Array.isArray(value) ? value : Object.keys(value).map((k) => value[k] as JsonValue);
  return parts.map((v) => flattenText(v, depth + 1)).join(" ");
}

function schemaProperties(schema: ToolSchema | undefined): Record<string, unknown> {
  const props = (schema?.parameters as { properties?: unknown } | undefined)?.properties;
  return typeof props === "object" && props !== null ? (props as Record<string, unknown>) : {};
}
