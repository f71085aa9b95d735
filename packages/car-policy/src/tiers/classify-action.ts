/**
 * Risk classification: the minimum permission tier an action needs, and its
 * likely rollback contract. The tier is the highest any of five signals
 * implies, each read from the part of the action that carries that evidence:
 *
 * 1. the tool name, by whole `snake`/`camel` segments (`send_email`, `readSecret`);
 * 2. the command line (`command`/`args`/`argv`/`flags`), read as the gate
 *    reads it (`command-tier.ts`), so `curl` inside a commit message is not
 *    a `curl` run and `git -C . push -f` is a push; an exec-like tool's
 *    other strings are read as commands too, to raise to `full_access`;
 * 3. parameter keys naming a credential (`api_key`, a nested `auth.token`);
 * 4. declared target paths (`path`, `file`, `dest`, …) at sensitive locations;
 * 5. a narrow list of always-dangerous phrases anywhere in the parameters.
 *
 * No signal scans arbitrary values for common words: a URL is not "http
 * access", a message body saying "send" sends nothing. These are conservative
 * keyword heuristics, and the reasons say which signal fired.
 */
import type { Action, ActionProposal, JsonObject, JsonValue, Reversibility, ToolSchema } from "@car/ir";
import { getOwn, missingRequiredCompensation, parseOutputRef, rollbackContract } from "@car/ir";
import { argvToCommand } from "../rules/deny-command.ts";
import { type CommandReading, readCommand } from "./command-tier.ts";
import { DANGEROUS_PHRASES, fullAccessStrings, nameSegments, readParameters } from "./parameter-reading.ts";
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

const COMMAND_KEYS = new Set(["command", "cmd", "args", "argv", "flags"]);
/** Keys naming the program when its arguments come separately (`{command: "git", args: ["push"]}`). */
const PROGRAM_KEYS = ["command", "cmd", "program", "executable", "bin"];
const ARGS_KEYS = ["args", "argv", "arguments"];
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

  // A whole-string `$id.output` reference is decided by an earlier action: its resolved form is classified at dispatch
  // (DECISIONS §22), so here it says only that the tool runs something.
  const lines = commandLines(params);
  const commandTexts = lines.filter((text) => !isOutputRef(text));
  if (commandTexts.length < lines.length)
    raise("sandbox_edit", "the command comes from an earlier action's output; its resolved form is classified at dispatch");
  const readings = new Map<string, CommandReading>();
  const readOnce = (text: string): CommandReading => {
    let reading = readings.get(text);
    if (reading === undefined) {
      reading = readCommand(text);
      readings.set(text, reading);
    }
    return reading;
  };
  for (const text of commandTexts) for (const s of readOnce(text).signals) raise(s.tier, s.why);
  // An exec-like tool may run any string it is given: each is read as a command too, though only to raise to `full_access`
  // (a `cwd` or a `stdin` text is no proof the tool changes files, and prose that does not parse as a command is no proof of anything).
  if (runsCommand || segments.some((s) => EXEC_SEGMENTS.has(s))) {
    for (const { text, signals } of fullAccessStrings(params, readOnce)) {
      if (lines.includes(text)) continue;
      for (const s of signals) raise(s.tier, `parameter text: ${s.why}`);
    }
  }
  const reading = readParameters(params);
  for (const path of reading.credentialPaths) raise("full_access", `parameter key '${path.join(".")}' names a credential`);
  const pathKeys = new Set(PATH_KEYS);
  for (const [name, prop] of Object.entries(schemaProperties(schema))) {
    if (typeof prop === "object" && prop !== null && (prop as { format?: unknown }).format === "path") pathKeys.add(name.toLowerCase());
  }
  for (const key of Object.keys(params)) {
    const value = params[key];
    if (!pathKeys.has(key.toLowerCase()) || typeof value !== "string") continue;
    if (SENSITIVE_PATHS.some((re) => re.test(value))) raise("full_access", `parameter '${key}' targets a sensitive path`);
  }
  const phrase = DANGEROUS_PHRASES.find((p) => reading.phrases.has(p));
  if (phrase) raise("full_access", `parameters contain '${phrase}'`);

  return { ...base, tier, reasons, reversibility: classifyReversibility(segments, phrase !== undefined) };
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

/**
 * The command lines a tool's command parameters hold: a string as it is, an
 * argv array as the line it runs, and a program key with an argument array
 * (`{command: "git", args: ["push", "-f"]}`) as one line.
 */
function commandLines(params: JsonObject): string[] {
  const lines: string[] = [];
  for (const key of Object.keys(params)) {
    if (!COMMAND_KEYS.has(key.toLowerCase())) continue;
    const value = params[key] as JsonValue;
    if (isStringArray(value) && value.some(isOutputRef)) lines.push(value.find(isOutputRef) as string);
    else lines.push(typeof value === "string" ? value : isStringArray(value) ? argvToCommand(value) : flattenText(value));
  }
  const program = PROGRAM_KEYS.map((k) => getOwn(params, k)).find((v) => typeof v === "string" && v.trim() !== "" && !/\s/.test(v.trim()));
  const args = ARGS_KEYS.map((k) => getOwn(params, k)).find(isStringArray);
  if (typeof program === "string" && args !== undefined && !args.some(isOutputRef)) lines.push(argvToCommand([program.trim(), ...args]));
  return lines;
}

/** A command line that is, or is built from an argv holding, a whole-string output reference. */
function isOutputRef(text: string): boolean {
  return parseOutputRef(text) !== undefined;
}

function isStringArray(value: JsonValue | undefined): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string");
}

/** Heuristic rollback contract over the tool name and parameters; an unrecognised tool is `irreversible`. */
function classifyReversibility(segments: readonly string[], dangerous: boolean): Reversibility {
  const has = (...words: string[]) => segments.some((s) => words.includes(s));
  if (has("send", "email", "mail", "sms", "pay", "payment", "charge", "transfer", "purchase", "buy", "publish", "tweet", "drop", "destroy") || dangerous) {
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
