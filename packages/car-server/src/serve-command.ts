/**
 * `car serve`: parses the flags, starts the server, prints where it listens
 * and the token, and shuts down gracefully on SIGTERM/SIGINT (a second signal
 * cancels whatever is still running instead of waiting for it).
 */
import { isCarError } from "@car/ir";
import { PERMISSION_TIERS } from "@car/policy";
import { type OptionSpecs, parseArgs, parseDurationMs, usageError } from "./argv.ts";
import { resolveCarHome } from "./car-home.ts";
import { type OtelExport, startOtelExport } from "./otel.ts";
import { LIMIT_OPTION_SPECS, LIMITS_USAGE, limitsFromFlags } from "./limits.ts";
import { openServeStore } from "./serve-store.ts";
import { journalDirDatabase, NO_APPROVALS_REFUSAL, noApprovalsRequested, readAuthTokenFile } from "./reference-flags.ts";
import { DEFAULT_HOST, DEFAULT_PORT, DEFAULT_TOOL_TIMEOUT_MS, startServer, type ServerOptions } from "./server.ts";
import { createServerLog, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "./server-log.ts";

const USAGE = `Usage: car serve [--host 127.0.0.1] [--port 9100] [--db PATH|postgres://…] [--tier sandbox_edit] [--console] [--no-auth] [--token T] [--log-level info] [--log-format human] [--otel [--otel-endpoint URL]]

Serve the CAR runtime as JSON-RPC 2.0 over WebSocket. Each connection is its
own session with its own runtime; state, the audit log, approvals and agent
postures live in the database, shared by every session.

Options:
  --host <HOST>    Address to bind [default: ${DEFAULT_HOST}]
  -p, --port <N>   Port to listen on; 0 picks a free port [default: ${DEFAULT_PORT}]
  --db <PATH|URL>  SQLite file or postgres:// URL; :memory: keeps nothing and isolates sessions [default: $CAR_HOME/car.db]
  --journal-dir <DIR>  The original's journal directory: the database (whose event log is the
                   journal) is DIR/car.db; ~/.car/… means $CAR_HOME/… [instead of --db]
  --tier <TIER>    The standing permission tier every session starts at and
                   cannot rise above: read_only, sandbox_edit or full_access;
                   full_access actions still need a recorded approval
                   (permission.approve, car approvals approve) [default: sandbox_edit]
  --decision-timeout <D>  How long a supervision intent waits for a verdict
                   before it is denied (500ms, 30s, 2m) [default: 30s]
  --console        Also serve the operator console at http://HOST:PORT/console/ (behind the same token)
  --no-auth        Do not require session.auth (loopback hosts only; also CAR_NO_AUTH=1)
  --token <T>      Use this token instead of minting one (alias --auth-token)
  --auth-token-file <FILE>  Read the token from FILE (mode 0600 or stricter, not empty),
                   then delete FILE (also CAR_AUTH_TOKEN_FILE)
  --no-approvals   Refused (also CAR_NO_APPROVALS=1): every session is gated and
                   full_access is always a human's decision
  --otel           Export OpenTelemetry spans (proposal, action, tool call) over OTLP/HTTP
  --otel-endpoint <URL>  Where to send them [default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, or http://localhost:4318/v1/traces]
  --log-level <L>  ${LOG_LEVELS.join("|")}: connections, auth failures and proposals at info,
                   every method with its duration at debug [default: info]
  --log-format <F> json (pino NDJSON) or human, on stderr; never a token or parameter value [default: human]
  -h, --help       Print help

Limits (docs/operating.md in @car/server):
${LIMITS_USAGE}

Environment:
  CAR_HOME          State directory (absolute); the token is written to $CAR_HOME/auth-token.<port>, and to
                    $CAR_HOME/auth-token unless another running server holds it [default: ~/.car]
  CAR_AUTH_TOKEN    The token to use when --token is not given
  CAR_AUTH_TOKEN_FILE  As --auth-token-file
  CAR_TOOL_TIMEOUT  Seconds to wait on a tools.execute callback when the action declares no timeout_ms [default: ${DEFAULT_TOOL_TIMEOUT_MS / 1000}]
  CAR_HANDLER_TIMEOUT  Seconds a request's handler may run before it is answered -32004 (proposal.submit: from its budgets) [default: 1800]
`;

export interface ServeIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  env: NodeJS.ProcessEnv;
  /** Registers the shutdown signals; returns the function that unregisters them. */
  onSignal: (handler: (signal: NodeJS.Signals) => void) => () => void;
}

const processIo: ServeIo = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  onSignal(handler) {
    process.on("SIGTERM", handler);
    process.on("SIGINT", handler);
    return () => {
      process.off("SIGTERM", handler);
      process.off("SIGINT", handler);
    };
  },
};

type Parsed =
  | { help: true }
  | {
      help: false;
      options: ServerOptions;
      db: string | undefined;
      otel: { endpoint: string | undefined } | undefined;
      warnings: string[];
      logLevel: LogLevel;
      logFormat: LogFormat;
    };

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], option: string, fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw usageError(`${option} must be one of ${allowed.join(", ")}, got '${value}'`);
  return value as T;
}

const SPECS = {
  host: { type: "string" },
  port: { type: "string", short: "p" },
  db: { type: "string" },
  // `--no-auth` is the negation of this flag.
  auth: { type: "boolean" },
  token: { type: "string" },
  "auth-token": { type: "string" },
  "require-auth": { type: "boolean" },
  "auth-token-file": { type: "string" },
  "journal-dir": { type: "string" },
  "no-approvals": { type: "boolean" },
  otel: { type: "boolean" },
  "otel-endpoint": { type: "string" },
  tier: { type: "string" },
  "decision-timeout": { type: "string" },
  console: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  ...LIMIT_OPTION_SPECS,
  "log-level": { type: "string" },
  "log-format": { type: "string" },
} as const satisfies OptionSpecs;

/**
 * `CAR_AUTH_TOKEN`: the token to use when no `--token` is given (the
 * reference's server-side override). Unset or empty means none; a value of
 * only whitespace is refused rather than read as "no token".
 */
function envToken(env: NodeJS.ProcessEnv): string | undefined {
  const value = env["CAR_AUTH_TOKEN"];
  if (value === undefined || value === "") return undefined;
  if (value.trim() === "") throw usageError("CAR_AUTH_TOKEN is only whitespace: unset it, or set it to the token");
  return value.trim();
}

/**
 * `--auth-token-file` / `CAR_AUTH_TOKEN_FILE`: where the token file is, if
 * one is named. Beside another source of the token, or beside `--no-auth`,
 * it is refused rather than one of them silently winning.
 */
function tokenFileOf(flag: string | undefined, given: string | undefined, noAuth: boolean, env: NodeJS.ProcessEnv): [string, string] | undefined {
  const fromEnv = env["CAR_AUTH_TOKEN_FILE"];
  const named: [string, string] | undefined =
    flag !== undefined ? [flag, "--auth-token-file"] : fromEnv !== undefined && fromEnv !== "" ? [fromEnv, "CAR_AUTH_TOKEN_FILE"] : undefined;
  if (named === undefined) return undefined;
  const source = named[1];
  if (given !== undefined) throw usageError(`${source} and --token both give the token; give one`);
  if (env["CAR_AUTH_TOKEN"] !== undefined && env["CAR_AUTH_TOKEN"] !== "") throw usageError(`${source} and CAR_AUTH_TOKEN both give the token; give one`);
  if (noAuth) throw usageError(`${source} and --no-auth contradict each other`);
  return named;
}

function parseServeArgs(args: string[], env: NodeJS.ProcessEnv): Parsed {
  const { positionals, options: o } = parseArgs(args, SPECS);
  if (o.help === true) return { help: true };
  if (positionals.length > 0) throw usageError(`unexpected argument '${positionals[0]}'`);
  const options: ServerOptions = {};
  const warnings: string[] = [];
  if (o.host !== undefined) options.host = o.host;
  if (o.port !== undefined) {
    const port = Number(o.port);
    if (!/^\d+$/.test(o.port) || port > 65535) throw usageError(`--port must be an integer from 0 to 65535, got '${o.port}'`);
    options.port = port;
  }
  if (o.auth === false || env["CAR_NO_AUTH"] === "1") options.auth = false;
  const noApprovals = noApprovalsRequested(o["no-approvals"], env);
  if (noApprovals !== undefined) throw usageError(`${noApprovals} ${NO_APPROVALS_REFUSAL}`);
  const tokenFile = tokenFileOf(o["auth-token-file"], o.token ?? o["auth-token"], options.auth === false, env);
  const token = o.token ?? o["auth-token"] ?? (tokenFile === undefined ? envToken(env) : undefined);
  if (token !== undefined) {
    if (options.auth === false) throw usageError(`${(o.token ?? o["auth-token"]) ? "--token" : "CAR_AUTH_TOKEN"} and --no-auth contradict each other`);
    options.token = token;
  }
  if (o["require-auth"] === true) warnings.push("--require-auth is deprecated and has no effect: auth is on by default");
  const toolTimeout = env["CAR_TOOL_TIMEOUT"];
  if (toolTimeout !== undefined && toolTimeout !== "") {
    const seconds = Number(toolTimeout);
    if (!Number.isFinite(seconds) || seconds <= 0) throw usageError(`CAR_TOOL_TIMEOUT must be a positive number of seconds, got '${toolTimeout}'`);
    options.toolTimeoutMs = seconds * 1000;
  }
  const handlerTimeout = env["CAR_HANDLER_TIMEOUT"];
  if (handlerTimeout !== undefined && handlerTimeout !== "") {
    const seconds = Number(handlerTimeout);
    if (!Number.isFinite(seconds) || seconds <= 0) throw usageError(`CAR_HANDLER_TIMEOUT must be a positive number of seconds, got '${handlerTimeout}'`);
    options.handlerTimeoutMs = seconds * 1000;
  }
  if (o.db === "") throw usageError("--db must not be empty");
  if (o["journal-dir"] !== undefined && o.db !== undefined) throw usageError("--journal-dir and --db both say where the database is; give one");
  if (o.tier !== undefined) options.standingTier = oneOf(o.tier, PERMISSION_TIERS, "--tier", "sandbox_edit");
  if (o["decision-timeout"] !== undefined) options.decisionTimeoutMs = parseDurationMs(o["decision-timeout"], "--decision-timeout");
  if (o.console === true) {
    if (options.auth === false) throw usageError("--console needs the token: it cannot be combined with --no-auth (or CAR_NO_AUTH=1)");
    options.console = true;
  }
  const endpoint = o["otel-endpoint"];
  if (endpoint !== undefined && o.otel !== true) throw usageError("--otel-endpoint needs --otel");
  if (endpoint !== undefined && !/^https?:\/\//.test(endpoint)) throw usageError(`--otel-endpoint must be an http(s) URL, got '${endpoint}'`);
  const limits = limitsFromFlags(o);
  if (Object.keys(limits).length > 0) options.limits = limits;
  const logLevel = oneOf(o["log-level"], LOG_LEVELS, "--log-level", "info");
  const logFormat = oneOf(o["log-format"], LOG_FORMATS, "--log-format", "human");
  const db = o["journal-dir"] !== undefined ? journalDirDatabase(o["journal-dir"], env) : o.db;
  // Last: reading the file deletes it, so every other flag is checked first.
  if (tokenFile !== undefined) options.token = readAuthTokenFile(...tokenFile);
  return { help: false, options, db, otel: o.otel === true ? { endpoint } : undefined, warnings, logLevel, logFormat };
}

/**
 * Runs `car serve` until a shutdown signal. Resolves with the exit code: 0
 * after a clean shutdown, 2 for bad usage, or the error's exit code when the
 * server cannot start.
 */
export async function runServe(args: string[], io: ServeIo = processIo): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseServeArgs(args, io.env);
  } catch (err) {
    io.stderr(`car serve: ${(err as Error).message}`);
    io.stderr("Run `car serve --help` for usage.");
    return 2;
  }
  if (parsed.help) {
    io.stdout(USAGE);
    return 0;
  }
  for (const w of parsed.warnings) io.stderr(`car serve: warning: ${w}`);

  const serverLog = createServerLog(parsed.logLevel, parsed.logFormat, io.stderr);
  let store: Awaited<ReturnType<typeof openServeStore>>;
  let server: Awaited<ReturnType<typeof startServer>>;
  let otel: OtelExport | undefined;
  try {
    if (parsed.otel !== undefined) otel = await startOtelExport(parsed.otel.endpoint, (line) => io.stderr(`car serve: ${line}`), io.env);
    store = await openServeStore(parsed.db, io.env);
    server = await startServer({
      ...parsed.options,
      ...(store !== undefined ? { store } : {}),
      ...(otel !== undefined ? { tracer: otel.tracer } : {}),
      carHome: resolveCarHome(io.env),
      log: (line) => io.stderr(`car serve: ${line}`),
      serverLog,
    });
  } catch (err) {
    await store?.close?.();
    await otel?.shutdown();
    io.stderr(`car serve: ${(err as Error).message}`);
    return isCarError(err) ? err.exitCode : 1;
  }
  serverLog.started({ url: server.url, auth: server.token !== undefined, store: storeKind(parsed.db) });
  io.stdout(`car serve listening on ${server.url}`);
  if (server.token === undefined) io.stdout("auth: off (--no-auth)");
  else {
    io.stdout(`auth token: ${server.token}`);
    if (server.tokenFile !== undefined) io.stdout(`token file: ${server.tokenFile}`);
  }
  // The token rides in the fragment, which a browser never sends: it reaches the page, not a log.
  if (server.consoleUrl !== undefined) io.stdout(`console: ${server.consoleUrl}#token=${server.token}`);

  await new Promise<void>((resolve) => {
    let signals = 0;
    const unregister = io.onSignal((signal) => {
      signals += 1;
      if (signals === 1) {
        io.stderr(`car serve: ${signal}: finishing in-flight requests, then shutting down (send it again to cancel them)`);
        void server.close().then(() => {
          unregister();
          resolve();
        });
      } else {
        void server.close({ graceMs: 0 });
      }
    });
  });
  // Only now: every session's proposals have finished or been cancelled and committed their rollback.
  await store?.close?.();
  // The last spans (the final proposals') leave before the process does.
  await otel?.shutdown();
  io.stderr("car serve: stopped");
  return 0;
}

/** The kind of database, for the start-up record: a URL may hold a password, so it is never logged. */
function storeKind(db: string | undefined): string {
  if (db === undefined) return "sqlite (default)";
  if (db === ":memory:") return "memory";
  return /^postgres(ql)?:/.test(db) ? "postgres" : "sqlite";
}
