/**
 * `car init`: creates `.car/policies/` with a commented example, so a project
 * starts from a file that documents every rule kind but enforces nothing
 * until someone uncomments a line.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs, expectPositionals } from "@car/server/argv";
import { println } from "../io.ts";

export const usage = `Usage: car init [--dir DIR]

Creates DIR/.car/policies/ (DIR defaults to the current directory) with a
commented example policy file. Existing files are left untouched.

Options:
  -d, --dir <DIR>  Directory to create .car/ in`;

const EXAMPLE = `# CAR project policies. Every *.toml in this directory is read in file-name
# order and merged. Each rule only ever adds denials; a file that does not
# parse denies every call until it is fixed. Uncomment what you need.
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
  const { positionals, options } = parseArgs(args, { dir: { type: "string", short: "d" } });
  expectPositionals(positionals, []);
  const root = resolve(options.dir ?? ".");
  const policies = join(root, ".car", "policies");
  mkdirSync(policies, { recursive: true });
  const example = join(policies, "example.toml");
  if (existsSync(example)) {
    println(`${example} already exists; left as it is`);
  } else {
    writeFileSync(example, EXAMPLE);
    println(`created ${example}`);
  }
  println("Uncomment rules in it (or add more *.toml files), then run 'car policy lint'.");
  return 0;
}
