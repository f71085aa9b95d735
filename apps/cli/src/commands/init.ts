/**
 * `car init`: creates `.car/policies/` with a commented example, so a project
 * starts from a file that documents every rule kind but enforces nothing
 * until someone uncomments a line.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs, expectPositionals } from "../argv.ts";
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
# Check a call:   car policy check --tool Bash --params '{"command":"ls"}'
# Check files:    car policy lint

# Tools that may never run.
# deny_tool = ["deploy_prod"]

# Substrings no parameter of any tool may contain.
# deny_keyword = ["rm -rf /", "DROP TABLE"]

# Deny a tool when one parameter equals a value and/or contains a substring
# (with neither, any call carrying the parameter is denied).
# [[deny_tool_param]]
# tool = "http_request"
# param = "url"
# contains = "169.254.169.254"

# The only allowlist: calls to the tool are denied unless the parameter is
# present and exactly one of these values.
# [[allow_tool_param]]
# tool = "deploy"
# param = "env"
# allow = ["staging", "preview"]

# A regular expression (RE2 syntax, unanchored) over a parameter. With
# negate = true a mismatch, or an absent parameter, denies instead.
# [[deny_tool_param_matching]]
# tool = "http_request"
# param = "body"
# matches = "sk-[A-Za-z0-9]{20,}"

# At most max_calls calls to the tool within a sliding window.
# [[rate_limit_tool]]
# tool = "http_request"
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
