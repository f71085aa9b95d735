/**
 * `car init`: sets a project up so the gate holds from the first tool call.
 * It writes `.car/policies/defaults.toml` (rules that deny the most
 * dangerous classes of call, enforced at once), a commented `example.toml`
 * documenting every rule kind, and installs the PreToolUse hook for Claude
 * Code (`.claude/settings.json`) and Codex (`.codex/hooks.json`).
 *
 * The hook command cannot fail open: it names the node and the car that ran
 * `car init` by absolute path, so it does not depend on `car` being on PATH,
 * and if that car cannot start it exits 2, which both hosts read as a block.
 * There is no `; exit 0`.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { CarError, isJsonObject, type JsonObject, type JsonValue } from "@car/ir";
import { parseArgs, expectPositionals } from "@car/server/argv";
import { println } from "../io.ts";

export const usage = `Usage: car init [--dir DIR] [--no-hooks]

Creates DIR/.car/policies/ (DIR defaults to the current directory) with
defaults.toml, rules enforced at once that deny the most dangerous classes of
call (deleting / or ~, force pushes, a download piped into a shell, reading
.env files, dropping tables, the cloud metadata address), and example.toml, a
commented example of every rule kind. Existing files are left untouched.

It also installs the PreToolUse hook into DIR/.claude/settings.json (Claude
Code) and DIR/.codex/hooks.json (Codex), keeping everything else in them and
replacing an older car hook. The hook command names this node and this car by
absolute path, so it works without car on PATH, and it blocks the call (exit
2) if that car cannot start: it never fails open.

Options:
  -d, --dir <DIR>  Directory to set up
      --no-hooks   Write the policy files only`;

/** Rules enforced from the first call. Each denies a class of call that is never routine for an agent. */
const DEFAULTS = `# Written by 'car init': rules enforced at once. Each denies a class of call
# that is never routine for an agent. Delete a rule to allow what it denies;
# add your own in other *.toml files (example.toml documents every kind).
#
# A shell command the gate cannot prove safe (text piped into a shell, an
# option that runs a command, a secret in a request, ...) is put to you:
# Claude Code asks, Codex (which cannot ask) denies. "deny" refuses such
# commands outright; "allow" lets them through to your own permission prompt.
unproven = "ask"

# Deleting the root or the home directory, in any flag order or spelling.
[[deny_command]]
program = "rm"
flags = ["-r|-R|--recursive"]
args = ["/"]

[[deny_command]]
program = "rm"
flags = ["-r|-R|--recursive"]
args = ["~"]

# Rewriting shared history.
[[deny_command]]
program = "git"
subcommand = "push"
flags = ["--force|-f|--force-with-lease|--force-if-includes|+refspec"]

# Destroying infrastructure.
[[deny_command]]
program = "terraform"
subcommand = "destroy"

# A download piped into a shell, from any host (the egress guard already
# denies unlisted hosts; this covers the allowlisted installers too).
[[deny_tool_param_matching]]
tool = "Bash"
param = "command"
matches = '''(curl|wget)\\b[^|;&]*\\|\\s*(sudo\\s+)?(env\\s+)?(ba|z|da|k)?sh\\b'''

[[deny_tool_param_matching]]
tool = "shell"
param = "command"
matches = '''(curl|wget)\\b[^|;&]*\\|\\s*(sudo\\s+)?(env\\s+)?(ba|z|da|k)?sh\\b'''

# Reading secrets from .env files (.env.example and friends stay readable).
[[deny_tool_param_matching]]
tool = "Read"
param = "file_path"
matches = '''(^|/)\\.env(\\.(local|development|production|staging|test|dev|prod))?$'''

[[deny_tool_param_matching]]
tool = "Bash"
param = "command"
matches = '''(^|[\\s<'"=@/])\\.env(\\.(local|development|production|staging|test|dev|prod))?($|[\\s'";|&)])'''

[[deny_tool_param_matching]]
tool = "shell"
param = "command"
matches = '''(^|[\\s<'"=@/])\\.env(\\.(local|development|production|staging|test|dev|prod))?($|[\\s'";|&)])'''

# Dropping a database or a table.
[[deny_tool_param_matching]]
tool = "Bash"
param = "command"
matches = '''(?i)\\bdrop\\s+(table|database|schema)\\b'''

# The cloud metadata address, in any spelling of the host.
[[deny_tool_param]]
tool = "WebFetch"
param = "url"
contains = "169.254.169.254"

[[deny_tool_param]]
tool = "Bash"
param = "command"
contains = "169.254.169.254"
`;

const EXAMPLE = `# CAR project policies. Every *.toml in this directory is read in file-name
# order and merged. Each rule only ever adds denials; a file that does not
# parse denies every call until it is fixed. Uncomment what you need
# (defaults.toml holds the rules car init enforces from the start).
#
# Rules name tools as the host calls them. Claude Code: Bash, Read, Write,
# Edit, MultiEdit, NotebookEdit, WebFetch, WebSearch, Glob, Grep. Codex:
# shell (its argv is read as the command it runs), apply_patch. MCP tools:
# mcp__<server>__<tool>. MultiEdit, NotebookEdit and apply_patch are also
# checked as Write and Edit, on every path, after normalising it
# (src/../.env is .env), so one file-path rule covers them all.
#
# The gate reads commands statically; it is not a sandbox. It sees the
# programs a command line runs (through sudo, bash -c, $( ), pipes) and
# denies what it cannot resolve when the line also reaches the network. It
# does not see what a script file or a program does once it runs.
#
# Check a call:   car policy check --tool Bash --params '{"command":"ls"}'
# Check files:    car policy lint

# Tools that may never run.
# deny_tool = ["WebSearch", "NotebookEdit"]

# Substrings no parameter of any tool may contain. A command is also matched
# after quotes, escapes and flag order are normalised: "rm -rf /" also
# catches rm -r -f "/" and r''m -fr /.
# deny_keyword = ["rm -rf /", "DROP TABLE"]

# A command in any spelling: program, subcommand, flags as a set (short
# clusters split, alternatives with |, +refspec = an operand starting with +),
# operands. Runs on every tool's "command" parameter.
# [[deny_command]]
# program = "git"
# subcommand = "push"
# flags = ["--force|-f|--force-with-lease|+refspec"]
#
# [[deny_command]]
# program = "rm"
# flags = ["-r|-R|--recursive", "-f|--force"]
# args = ["/"]

# Deny a tool when one parameter equals a value and/or contains a substring
# (with neither, any call carrying the parameter is denied).
# [[deny_tool_param]]
# tool = "Write"            # also covers Edit, MultiEdit, NotebookEdit, apply_patch
# param = "file_path"
# contains = ".env"
#
# [[deny_tool_param]]
# tool = "WebFetch"         # hosts match in every spelling: 0xa9fea9fe is 169.254.169.254
# param = "url"
# contains = "169.254.169.254"
#
# [[deny_tool_param]]
# tool = "Bash"
# param = "command"
# contains = "169.254.169.254"

# The only allowlist: calls to the tool are denied unless the parameter is
# present and exactly one of these values.
# [[allow_tool_param]]
# tool = "mcp__deploy__release"
# param = "env"
# allow = ["staging", "preview"]

# A regular expression (RE2 syntax, unanchored) over a parameter. Setting
# negate to true makes a mismatch, or an absent parameter, deny instead.
# [[deny_tool_param_matching]]
# tool = "Bash"
# param = "command"
# matches = "kubectl delete (ns|namespace)"

# At most max_calls calls to the tool within a sliding window (per process:
# the hook starts afresh on every call, so this binds the engine, not the hook).
# [[rate_limit_tool]]
# tool = "WebFetch"
# max_calls = 10
# interval_secs = 60.0
`;

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { dir: { type: "string", short: "d" }, "no-hooks": { type: "boolean" } });
  expectPositionals(positionals, []);
  const root = resolve(options.dir ?? ".");
  const policies = join(root, ".car", "policies");
  mkdirSync(policies, { recursive: true });
  for (const [name, text] of [
    ["defaults.toml", DEFAULTS],
    ["example.toml", EXAMPLE],
  ] as const) {
    const file = join(policies, name);
    if (createOnly(file, text)) println(`created ${file}`);
    else println(`${file} already exists; left as it is`);
  }
  if (!options["no-hooks"]) {
    const command = hookCommand();
    for (const [file, matcher] of [
      [join(root, ".claude", "settings.json"), "*"],
      [join(root, ".codex", "hooks.json"), ".*"],
    ] as const) {
      installHook(file, matcher, command);
      println(`installed the PreToolUse hook in ${file}`);
    }
    println(`hook command: ${command}`);
  }
  println("Edit the rules in .car/policies (or add more *.toml files), then run 'car policy lint'.");
  return 0;
}

/**
 * Writes `text` to a new file; false, writing nothing, when anything is
 * already at `file` — a file, a directory, or a symlink, dangling or not
 * (O_EXCL: the check and the creation are one step, and a link planted
 * there is never followed to write somewhere else).
 */
function createOnly(file: string, text: string): boolean {
  try {
    writeFileSync(file, text, { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new CarError("invalid_params", `cannot create ${file}: ${(error as Error).message}`);
  }
}

/**
 * The hook command for this car: node and car's entry by absolute path (with
 * the node options this car runs under), and a fallback that blocks the call
 * with exit 2 when they cannot start — a car moved, deleted or broken after
 * \`car init\` must not turn the hook into a no-op.
 */
export function hookCommand(): string {
  const entry = process.argv[1];
  if (entry === undefined) throw new CarError("internal", "cannot tell which car is running: process.argv[1] is unset");
  const argv = [process.execPath, ...process.execArgv, hookEntry(realpathSync(entry)), "policy-check-hook"];
  const deny = "car policy-check-hook could not start, so the call is blocked; run car init again";
  return `${argv.map(shellQuote).join(" ")} || { echo ${shellQuote(deny)} >&2; exit 2; }`;
}

/** The built CommonJS bin beside an ES module entry: the hook starts faster through it (src/car-bin.ts). */
function hookEntry(entry: string): string {
  const bin = entry.endsWith("car.mjs") ? `${entry.slice(0, -"car.mjs".length)}car.cjs` : entry;
  return existsSync(bin) ? bin : entry;
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Adds the hook to a host's settings file, keeping everything else in it and
 * dropping any older car hook (\`car policy-check-hook; exit 0\` among them).
 * A file that is not a JSON object is an error, never overwritten.
 */
function installHook(file: string, matcher: string, command: string): void {
  let settings: JsonObject = {};
  if (existsSync(file)) {
    // A FIFO or a device in its place would hang or never end the read.
    if (!statSync(file).isFile()) throw new CarError("invalid_params", `${file} is not a regular file; fix it or pass --no-hooks`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new CarError("invalid_params", `${file} is not valid JSON (${(err as Error).message}); fix it or pass --no-hooks`);
    }
    if (!isJsonObject(parsed as JsonValue)) throw new CarError("invalid_params", `${file} is not a JSON object; fix it or pass --no-hooks`);
    settings = parsed as JsonObject;
  }
  const hooks = isJsonObject(settings["hooks"] as JsonValue) ? (settings["hooks"] as JsonObject) : {};
  const existing = Array.isArray(hooks["PreToolUse"]) ? (hooks["PreToolUse"] as JsonValue[]) : [];
  const isCarHook = (h: JsonValue) => isJsonObject(h) && typeof h["command"] === "string" && h["command"].includes("policy-check-hook");
  const kept: JsonValue[] = [];
  for (const group of existing) {
    if (!isJsonObject(group) || !Array.isArray(group["hooks"])) {
      kept.push(group);
      continue;
    }
    const others = group["hooks"].filter((h) => !isCarHook(h));
    if (others.length > 0) kept.push({ ...group, hooks: others });
  }
  kept.push({ matcher, hooks: [{ type: "command", command }] });
  settings["hooks"] = { ...hooks, PreToolUse: kept };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
}
