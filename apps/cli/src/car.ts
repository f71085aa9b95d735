#!/usr/bin/env node
/**
 * The `car` entry. It imports nothing at the top: each command is loaded on
 * demand, so `car policy-check-hook` (run by an editor on every tool call)
 * pays only for the gate, and `car verify` never loads the engine.
 */

/** What every command module exports. */
export interface CommandModule {
  /** The help text: a usage line, arguments and options. */
  usage: string;
  /** Runs the command; resolves to the process exit code. */
  main(args: string[]): Promise<number>;
  /** Set when the command prints its own `--help`. */
  handlesHelp?: boolean;
}

interface CommandEntry {
  summary: string;
  load(): Promise<CommandModule>;
}

/**
 * The hook is a separate build entry (`dist/hook.cjs`, one CommonJS bundle),
 * loaded the way the bin loads it (src/hook-loader.ts: without the ES module
 * loader, with V8's code cache), so the bundler leaves it out of the CLI's
 * chunks. From source (tsx) it is `hook.ts`.
 */
async function loadHook(): Promise<CommandModule> {
  const fromSource = import.meta.url.endsWith(".ts");
  const path = new URL(fromSource ? "./hook.ts" : "./hook.cjs", import.meta.url);
  if (fromSource) return (await import(path.href)) as CommandModule;
  const { loadHook: loadBundle } = await import("./hook-loader.ts");
  const { hook, afterRun } = loadBundle(decodeURIComponent(path.pathname));
  return {
    usage: hook.usage,
    async main() {
      const code = await hook.main();
      afterRun();
      return code;
    },
  };
}

const COMMANDS: Record<string, CommandEntry> = {
  verify: { summary: "Statically verify a proposal", load: () => import("./commands/verify.ts") },
  simulate: { summary: "Simulate a proposal's state effects without executing", load: () => import("./commands/simulate.ts") },
  schema: { summary: "Print the input proposal's JSON Schema (for a model's structured output)", load: () => import("./commands/schema.ts") },
  optimize: { summary: "Optimize a proposal (remove phantom dependencies)", load: () => import("./commands/optimize.ts") },
  equivalent: { summary: "Compare two proposals' effects over test states", load: () => import("./commands/equivalent.ts") },
  run: { summary: "Verify, enforce policies and execute a proposal", load: () => import("./commands/run.ts") },
  init: {
    summary: "Create .car/policies/ (enforced defaults and a commented example) and install the PreToolUse hook",
    load: () => import("./commands/init.ts"),
  },
  policy: { summary: "Check a tool call against policies, or lint policy files", load: () => import("./commands/policy.ts") },
  "policy-check-hook": {
    summary: "PreToolUse hook: deny a tool call a policy forbids, ask about a command not proven safe",
    load: loadHook,
  },
  "sandbox-exec": { summary: "Run a command inside the OS sandbox the policies describe", load: () => import("./commands/sandbox-exec.ts") },
  mcp: { summary: "Serve policy_check, verify, simulate, optimize, equivalent and the skill tools over MCP (stdio)", load: () => import("./commands/mcp.ts") },
  serve: { summary: "Serve the JSON-RPC 2.0 WebSocket protocol", load: () => import("./commands/serve.ts") },
  // The reference's name for the server; the same command with the same flags.
  daemon: { summary: "Alias of car serve (the reference's name for the server)", load: () => import("./commands/serve.ts") },
  replay: {
    summary: "Show, re-check or re-run a recorded proposal from the audit log (verified first)",
    load: () => import("./commands/replay.ts"),
  },
  audit: { summary: "Verify the audit log's hash chain, query events, trim old ones", load: () => import("./commands/audit.ts") },
  skills: { summary: "Distill skills from an event-log journal; list the skills of a skill file", load: () => import("./commands/skills.ts") },
  approvals: {
    summary: "Approve or reject a gated operation; list, set and revoke postures and standing grants",
    load: () => import("./commands/approvals.ts"),
  },
};

/** Every exit status `car` uses; each CarError code maps to one of these (ERROR_CODES in @car/ir). */
const EXIT_CODES: readonly [number, string][] = [
  [0, "success: the proposal verified, the run finished with every action succeeded (or skipped by its own choice)"],
  [
    1,
    "the check or the run said no: verification failed, a tool failed, a policy denied, an approval is missing or refused (car approvals approve), a conflict, a store error, a broken or (with --require-key) unkeyed audit log",
  ],
  [2, "bad usage or input: unknown option, unreadable or malformed proposal/state/policy file, a port already in use"],
  [3, "internal error: a bug in car (please report it with the command line)"],
];

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    "car — the Common Agent Runtime command line",
    "",
    "Usage: car <command> [options]",
    "",
    "Commands:",
    ...lines,
    "",
    "Run 'car <command> --help' for a command's options. CAR_HOME (default ~/.car) is the state directory.",
    "",
    "Exit status (every command):",
    ...EXIT_CODES.map(([code, meaning]) => `  ${code}  ${meaning}`),
  ].join("\n");
}

async function dispatch(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? rest[0] : undefined;
    if (topic !== undefined && Object.hasOwn(COMMANDS, topic)) {
      process.stdout.write(`${(await COMMANDS[topic]!.load()).usage}\n`);
      return 0;
    }
    process.stdout.write(`${overview()}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-V") {
    const { VERSION } = await import("./version.ts");
    process.stdout.write(`car ${VERSION}\n`);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    process.stderr.write(`car: unknown command '${name}'\n\n${overview()}\n`);
    return 2;
  }
  try {
    const mod = await command.load();
    if (mod.handlesHelp !== true && (rest.includes("--help") || rest.includes("-h"))) {
      process.stdout.write(`${mod.usage}\n`);
      return 0;
    }
    return await mod.main(rest);
  } catch (err) {
    const { toCarError } = await import("@car/ir");
    const error = toCarError(err);
    process.stderr.write(`car ${name}: ${error.message}\n`);
    for (const p of error.details.problems ?? []) process.stderr.write(`  ${p.pointer || "/"}: ${p.message}\n`);
    if (error.code === "invalid_params") process.stderr.write(`Run 'car ${name} --help' for usage.\n`);
    return error.exitCode;
  }
}

process.exitCode = await dispatch(process.argv.slice(2));
