/** The command line of `car-conformance`, parsed into a plain record (no I/O here, so it is testable). */
export interface CliArgs {
  engine: boolean;
  ws?: string;
  token?: string;
  cmd?: string;
  capabilities: string[];
  scenarios: string[];
  /** What the runtime declares it supports (`--features a,b`, repeatable). */
  features: string[];
  /** A file, or `-` for stdout. */
  json?: string;
  junit?: string;
  scenariosDir?: string;
  timeoutMs?: number;
  startTimeoutMs: number;
  list: boolean;
  help: boolean;
}

export const USAGE = `Usage: car-conformance (--ws URL [--token T] | --cmd "COMMAND" [--ws URL] | --engine) [options]

Runs RuntimeBench, the CAR conformance suite, against a runtime.

Target (one of):
  --ws URL              a server speaking CAR's WebSocket JSON-RPC protocol
  --token T             its session.auth token (default: $CAR_AUTH_TOKEN)
  --cmd "COMMAND"       start the server with COMMAND, wait until it listens
                        (the ws:// URL and token it prints, or --ws's port),
                        and stop it at the end
  --engine              @car/engine in this process

Options:
  --features A,B        what the runtime supports beyond the required
                        capabilities (optional capabilities such as
                        rate-limits, detached-tools, reference); declared
                        ones are checked, the others reported as not checked
  --capability NAME     only this capability (repeatable; the verdict is PARTIAL)
  --scenario TEXT       only scenarios whose id contains TEXT (repeatable)
  --json [FILE]         write the JSON report to FILE (stdout when omitted)
  --junit FILE          write a JUnit XML report
  --scenarios DIR       read capability files from DIR instead of the bundled ones
  --timeout MS          per-scenario deadline (default 30000)
  --start-timeout MS    how long --cmd may take to listen (default 30000)
  --list                list the capabilities and exit
  -h, --help            this help

A --cmd server runs with CAR_HOME set to a new temporary directory, so it
starts from an empty store and without the operator's policy files.

Exit status: 0 when everything checked passed (CONFORMANT, or a PARTIAL run
without failures), 1 when a checked scenario failed or could not be judged
(NOT CONFORMANT, INCONCLUSIVE), 2 for bad usage or a server that would not start.
`;

function positiveInt(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag} needs a positive integer, got '${v}'`);
  return n;
}

export function parseCliArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = { engine: false, capabilities: [], scenarios: [], features: [], startTimeoutMs: 30_000, list: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i]!;
    const eq = raw.startsWith("--") ? raw.indexOf("=") : -1;
    const flag = eq === -1 ? raw : raw.slice(0, eq);
    const inline = eq === -1 ? undefined : raw.slice(eq + 1);
    /** The flag's value: after `=`, else the next word unless that is another flag. */
    const optionalValue = (): string | undefined => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--")) return undefined;
      i++;
      return next;
    };
    const value = (): string => {
      const v = optionalValue();
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "--engine":
        args.engine = true;
        break;
      case "--ws":
        args.ws = value();
        if (!/^wss?:\/\//.test(args.ws)) throw new Error(`--ws needs a ws:// or wss:// URL, got '${args.ws}'`);
        break;
      case "--token":
        args.token = value();
        break;
      case "--cmd":
        args.cmd = value();
        break;
      case "--capability":
        args.capabilities.push(value());
        break;
      case "--features":
        args.features.push(
          ...value()
            .split(",")
            .map((f) => f.trim())
            .filter((f) => f !== ""),
        );
        break;
      case "--scenario":
        args.scenarios.push(value());
        break;
      case "--json":
        args.json = optionalValue() ?? "-";
        break;
      case "--junit":
        args.junit = value();
        break;
      case "--scenarios":
        args.scenariosDir = value();
        break;
      case "--timeout":
        args.timeoutMs = positiveInt(flag, value());
        break;
      case "--start-timeout":
        args.startTimeoutMs = positiveInt(flag, value());
        break;
      case "--list":
        args.list = true;
        break;
      case "-h":
      case "--help":
        args.help = true;
        break;
      default:
        throw new Error(`unknown argument '${raw}'`);
    }
  }
  if (args.help || args.list) return args;
  const targets = [args.engine, args.ws !== undefined || args.cmd !== undefined].filter(Boolean).length;
  if (targets !== 1) throw new Error("choose one target: --ws URL, --cmd COMMAND, or --engine");
  if (args.token !== undefined && args.engine) throw new Error("--token applies to --ws / --cmd only");
  return args;
}
