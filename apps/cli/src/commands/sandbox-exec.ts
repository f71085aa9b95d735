/**
 * `car sandbox-exec`: run one command inside the OS sandbox the policies
 * describe for the working directory. The hook's wrap of a Bash call ends
 * here (`car sandbox-exec --if-available -c '<command>'`), and a user can
 * run it directly.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { policyDirs, sandboxMode } from "@car/policy/gate";
import { expectPositionals, parseArgs, usageError } from "@car/server/argv";
import { resolveCarHome } from "@car/server/car-home";
import { eprintln } from "../io.ts";
import { openSandbox } from "../sandbox/os-sandbox.ts";
import { loadRules, sandboxSettingsFor } from "../sandbox/policy-sandbox.ts";
import { shellQuote } from "../sandbox/shell-quote.ts";

export const usage = `Usage: car sandbox-exec [--if-available] (-c <COMMAND> | -- <PROGRAM> [ARGS...])

Runs a command inside the OS sandbox (@anthropic-ai/sandbox-runtime:
bubblewrap, socat and ripgrep on Linux; sandbox-exec on macOS) that the
policies for the current directory describe: network only to the allowed
hosts (sandbox.allowed_hosts, else the egress guard's default allowlist),
writes only in the workspace and the temp directory, never to a protected
path (paths file rules protect, the policy directories, CAR_HOME).

Options:
  -c <COMMAND>      A command line, run by bash inside the sandbox
  --if-available    Where the sandbox cannot start, say so on stderr and run the
                    command without it (the hook adds this for sandbox = true).
                    Ignored when a policy says sandbox = "required".

Without --if-available a command the sandbox cannot hold is not run (exit 1,
the reason on stderr). Otherwise the exit status is the command's own
(128 + N for a command killed by signal N).`;

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { c: { type: "string", short: "c" }, "if-available": { type: "boolean" } });
  let command: string;
  if (options.c !== undefined) {
    expectPositionals(positionals, []);
    command = options.c;
  } else {
    if (positionals.length === 0) throw usageError("give the command with -c '<command>' or after --");
    command = shellQuote(positionals);
  }
  const cwd = process.cwd();
  const carHome = resolveCarHome();
  const dirs = policyDirs(cwd, { carHome });
  const rules = loadRules(dirs);
  // Run directly, the defaults hold where no policy asks for a sandbox; a required one allows no fallback.
  const mode = sandboxMode(rules) === "required" || options["if-available"] !== true ? "required" : "on";
  const sandbox = await openSandbox(mode, sandboxSettingsFor(rules, dirs, cwd, carHome), eprintln);
  try {
    // The wrapped line is a shell script of the runtime's (bwrap and its proxy bridge); unwrapped, bash runs the command as it would inside.
    return await run(sandbox === undefined ? ["bash", "-c", command] : ["/bin/sh", "-c", await sandbox.wrapCommand(command)]);
  } finally {
    sandbox?.done();
    await sandbox?.close();
  }
}

/** Runs `argv` with this process's stdio, passing signals on; resolves to its exit status. */
function run(argv: readonly string[]): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: "inherit" });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      resolvePromise(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
    });
  });
}
