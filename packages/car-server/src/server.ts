/**
 * `startServer`: the JSON-RPC 2.0 WebSocket server as an in-process object,
 * so `car serve`, the tests and the conformance suite all run the same code.
 * Each accepted connection gets its own session and runtime; the server
 * itself holds only the listener, the token and the list of connections.
 */
import { createServer, type IncomingMessage, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { AgentSessions, sharesOversight } from "@car/engine";
import { CarError, systemClock } from "@car/ir";
import type { PermissionTier } from "@car/policy";
import { WebSocketServer } from "ws";
import { resolveCarHome } from "./car-home.ts";
import { agentKeyOf, generateToken, HOST_TOKEN_FILE, removeTokenFile, writeTokenFiles } from "./auth.ts";
import { InMemoryRunStore } from "@car/engine";
import { RunHub, type RunHubOptions } from "./runs/run-hub.ts";
import { Connection } from "./connection.ts";
import { DEFAULT_LIMITS, type ServerLimits, Slots } from "./limits.ts";
import { HeldBytes, HeldState } from "./held-bytes.ts";
import { isLoopbackHost } from "./loopback.ts";
import { METHODS } from "./methods/index.ts";
import type { ServeStore } from "./serve-store.ts";
import type { Tracer } from "@opentelemetry/api";
import { silentServerLog, type ServerLog } from "./server-log.ts";
import { createOversight } from "./supervision/oversight.ts";
import { isReservedAgentId } from "./postures/default-posture.ts";
import { CONSOLE_PATH, consoleHandler } from "./console-http.ts";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 9100;
/** The callback wait for an action that declares no `timeout_ms` (the reference's 300 s default). */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;
/** How long `close()` lets in-flight requests finish before cancelling them. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
/** The reference's liveness cadence: ping every 30 s, drop a peer silent for 90 s. */
const DEFAULT_PING_INTERVAL_MS = 30_000;
/** After cancelling, how long cancelled handlers get to send their answers before sockets close. */
const CANCEL_ANSWER_MS = 5_000;
/** Close code for a session that could not be set up (RFC 6455 "internal error"). */
const CLOSE_INTERNAL_ERROR = 1011;
/** Largest accepted frame: generous for proposals, bounded so one peer cannot exhaust memory. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export interface ServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Require `session.auth` (default true). Turning it off is refused on a non-loopback host. */
  auth?: boolean;
  /** Use this token instead of minting one. */
  token?: string;
  /** The state directory the token file is written to (default `CAR_HOME` or `~/.car`). */
  carHome?: string;
  /** Write the token to `<carHome>/auth-token.<port>`, and to `<carHome>/auth-token` unless another running server holds it (default true when auth is on). */
  writeTokenFile?: boolean;
  /** Callback wait for actions without `timeout_ms`. */
  toolTimeoutMs?: number;
  /** Default grace period for `close()`. */
  shutdownGraceMs?: number;
  /** Ping interval; a peer silent for three intervals is dropped (default 30 s, so 90 s). */
  pingIntervalMs?: number;
  /** Where operator-facing notes go (refused sessions); silent by default. */
  log?: (line: string) => void;
  /** Structured records: connections, auth failures, methods, proposals, shutdown (silent by default). */
  serverLog?: ServerLog;
  /**
   * A database every session shares (state, event log, approval ledger,
   * postures). The caller opens, recovers and closes it; without one each
   * session keeps its own in-memory runtime.
   */
  store?: ServeStore;
  /** Traces every session's proposals (OpenTelemetry); none by default. */
  tracer?: Tracer;
  /** Bounds on what one client may take; unset ones keep `DEFAULT_LIMITS`. */
  limits?: Partial<ServerLimits>;
  /**
   * The permission tier every session starts at and may not rise above
   * (DECISIONS §16); default `sandbox_edit`. `full_access` actions still
   * need a recorded approval.
   */
  standingTier?: PermissionTier;
  /** How long a handler may run before its request is answered -32004 (default 30 minutes; `CAR_HANDLER_TIMEOUT`). `proposal.submit` derives its own from its budgets. */
  handlerTimeoutMs?: number;
  /** Grace and resume lease before an abandoned run is marked `Incomplete` (default 250 ms and 10 s). */
  runs?: RunHubOptions;
  /** How long a supervision intent waits for a verdict before it is denied (default 30 s; `car serve --decision-timeout`). */
  decisionTimeoutMs?: number;
  /** Serve the operator console at `/console/` (`car serve --console`); without it that path answers 404. */
  console?: boolean;
}

export interface CloseOptions {
  /** How long in-flight requests may keep running before they are cancelled. */
  graceMs?: number;
}

export interface RunningServer {
  /** `ws://host:port/` */
  url: string;
  host: string;
  port: number;
  /** The token clients must present, or undefined with auth off. */
  token: string | undefined;
  /** Where the token was written, if it was: `auth-token` when this server holds it, else its own `auth-token.<port>`. */
  tokenFile: string | undefined;
  /** The per-launch host token (`session.auth { host_token }`: the host-management role), never served over the socket. */
  hostToken: string;
  /** Where the host token was written (`<carHome>/host-token`, 0600), if it was. */
  hostTokenFile: string | undefined;
  /** `http://host:port/console/` when the operator console is served (`console: true`). */
  consoleUrl: string | undefined;
  /** Number of open connections. */
  connections(): number;
  /**
   * Stops accepting connections and new requests, lets in-flight requests
   * finish for the grace period, cancels what is left (each gets its answer:
   * a proposal reports its actions as cancelled), then closes every socket.
   */
  close(options?: CloseOptions): Promise<void>;
}

export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? DEFAULT_PORT;
  const auth = options.auth ?? true;
  if (!auth && !isLoopbackHost(host)) {
    throw new CarError("invalid_params", `auth can only be turned off on a loopback host, not on ${host}`, { host });
  }
  // The console's whole security model is the token: without one, any page the operator's browser opens could drive it.
  if (!auth && options.console === true) {
    throw new CarError("invalid_params", "the operator console needs the token: --console cannot be combined with --no-auth");
  }
  if (options.token !== undefined && options.token.trim() === "") {
    throw new CarError("invalid_params", "the token must not be empty");
  }
  const carHome = options.carHome ?? resolveCarHome();
  const log = options.log ?? (() => {});
  const serverLog = options.serverLog ?? silentServerLog;
  let nextConnection = 0;
  const token = auth ? (options.token?.trim() ?? generateToken()) : undefined;
  const hostToken = generateToken();

  const limits: ServerLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const serverProposals = new Slots(limits.maxProposalsPerServer, "proposals running on this server (--max-proposals)");
  // One session per agent, shared by its connections; its trace facts kept in the server's log when it has a database.
  const agents = new AgentSessions(systemClock, options.store?.events);
  // Run traces in the database (or, without one, in memory for the life of the server).
  const runs = new RunHub(options.store?.runs ?? new InMemoryRunStore(), options.runs);
  const heldBytes = new HeldBytes(limits.maxHeldBytes);
  const heldState = new HeldState(heldBytes);
  // A store several servers share (PostgreSQL) makes them one system for supervisors, approvals that wait and host events.
  const oversight = createOversight(options.decisionTimeoutMs, sharesOversight(options.store) ? options.store.sharedOversight() : undefined);
  let draining = false;
  const connections = new Set<Connection>();
  const serveConsole = options.console === true && token !== undefined ? await consoleHandler({ token, events: options.store?.events }) : undefined;
  // Listening for the other servers last before the socket, so nothing that can fail before it leaves the listener open.
  await oversight.start();
  const http = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://server.invalid").pathname;
    if (path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`)) {
      if (serveConsole === undefined) {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("no console here: start car serve with --console\n");
        return;
      }
      serveConsole(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end();
      });
      return;
    }
    res.writeHead(426, { "content-type": "text/plain", connection: "close" });
    res.end("this endpoint speaks JSON-RPC 2.0 over WebSocket\n");
  });
  const wss = new WebSocketServer({ server: http, maxPayload: MAX_FRAME_BYTES });
  // `ws` re-emits the HTTP server's errors; `listen` below reports them, so this only keeps them from crashing the process.
  wss.on("error", () => {});
  wss.on("connection", (socket, request) => {
    if (draining) {
      socket.close(1001, "server shutting down");
      return;
    }
    let connection: Connection;
    try {
      connection = new Connection(socket, {
        token,
        hostToken,
        handlerTimeoutMs: options.handlerTimeoutMs,
        methods: METHODS,
        isDraining: () => draining,
        toolTimeoutMs: options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
        carHome,
        store: options.store,
        agentId: agentIdOf(request),
        agents,
        runs,
        agentKey: agentKeyOf(agentIdOf(request), token),
        standingTier: options.standingTier,
        tracer: options.tracer,
        limits,
        serverProposals,
        heldBytes,
        heldState,
        oversight,
        log: serverLog,
        connectionId: ++nextConnection,
        remoteAddress: request.socket.remoteAddress,
      });
    } catch (err) {
      // A session that cannot be built (an operator policy file that does not load) is refused, loudly.
      const message = err instanceof Error ? err.message : String(err);
      log(`refused a connection: ${message}`);
      serverLog.sessionRefused({ code: err instanceof CarError ? err.code : "internal" });
      socket.close(CLOSE_INTERNAL_ERROR, truncateUtf8(`session refused: ${message}`, 123));
      return;
    }
    connections.add(connection);
    socket.on("close", () => connections.delete(connection));
  });

  const pingMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
  const liveness = setInterval(() => {
    const now = Date.now();
    for (const c of connections) c.checkLiveness(now, pingMs * 3);
  }, pingMs);
  liveness.unref();

  try {
    await listen(http, host, port);
  } catch (err) {
    clearInterval(liveness);
    wss.close();
    await oversight.close();
    throw listenError(err as NodeJS.ErrnoException, host, port);
  }
  // Only now, listening: a server that fails to start never replaces the token of one that is running.
  const address = http.address() as AddressInfo;
  const tokenFiles = token !== undefined && (options.writeTokenFile ?? true) ? await writeTokenFiles(carHome, address.port, token) : [];
  const hostTokenFiles = (options.writeTokenFile ?? true) ? await writeTokenFiles(carHome, address.port, hostToken, HOST_TOKEN_FILE) : [];
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  /** Aborted by a second `close({ graceMs: 0 })` to stop waiting for in-flight work. */
  const cutGrace = new AbortController();
  const close = async (graceMs: number): Promise<void> => {
    draining = true;
    clearInterval(liveness);
    serverLog.shutdown("begin", { connections: connections.size });
    const httpClosed = new Promise<void>((resolve) => http.close(() => resolve()));
    const open = [...connections];
    await withDeadline(Promise.all(open.map((c) => c.drain())), graceMs, cutGrace.signal);
    serverLog.shutdown("cancelling", { connections: open.length });
    for (const c of open) c.cancelInFlight("the server is shutting down");
    // Cancelled handlers still answer (a proposal reports its cancelled actions); give them a moment to.
    await withDeadline(Promise.all(open.map((c) => c.drain())), CANCEL_ANSWER_MS);
    for (const c of open) c.closeSocket("server shutting down");
    wss.close();
    // Runs whose producers are gone or going end as Incomplete now, while the store is still open.
    await runs.close();
    await oversight.close();
    if (token !== undefined) for (const file of tokenFiles) await removeTokenFile(file, token);
    for (const file of hostTokenFiles) await removeTokenFile(file, hostToken);
    http.closeAllConnections();
    await httpClosed;
    serverLog.shutdown("done");
  };

  return {
    url: `ws://${urlHost}:${address.port}/`,
    host: address.address,
    port: address.port,
    token,
    tokenFile: tokenFiles[0],
    hostToken,
    hostTokenFile: hostTokenFiles[0],
    consoleUrl: serveConsole !== undefined ? `http://${urlHost}:${address.port}${CONSOLE_PATH}/` : undefined,
    connections: () => connections.size,
    close(closeOptions = {}) {
      const graceMs = closeOptions.graceMs ?? options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
      if (closing !== undefined && graceMs === 0) cutGrace.abort();
      return (closing ??= close(graceMs));
    },
  };
}

/** The agent a connection acts for: `?agent_id=` on the WebSocket URL, if given and non-empty. */
function agentIdOf(request: IncomingMessage): string | undefined {
  const id = new URL(request.url ?? "/", "ws://localhost").searchParams.get("agent_id");
  if (id !== null && isReservedAgentId(id)) throw new CarError("unauthorized", "an agent id must not hold a control character");
  return id === null || id === "" ? undefined : id;
}

/** A start-up failure as one line an operator can act on (`invalid_params`: exit 2, like any other bad setting). */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): CarError {
  const where = `${host}:${port}`;
  const message =
    err.code === "EADDRINUSE"
      ? `cannot listen on ${where}: the address is already in use (another car serve?); choose another --port`
      : err.code === "EACCES"
        ? `cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose another --port`
        : err.code === "EADDRNOTAVAIL" || err.code === "ENOTFOUND"
          ? `cannot listen on ${where}: no such local address; check --host`
          : `cannot listen on ${where}: ${err.message}`;
  return new CarError("invalid_params", message, { host, port, errno: err.code ?? null });
}

function listen(http: HttpServer, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
}

/** Waits for `work`, but no longer than `ms` or until `cut` aborts; the timer never outlives the wait. */
async function withDeadline(work: Promise<unknown>, ms: number, cut?: AbortSignal): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onCut: (() => void) | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    onCut = resolve;
    if (cut?.aborted) resolve();
    cut?.addEventListener("abort", onCut, { once: true });
  });
  try {
    await Promise.race([work.then(() => undefined), deadline]);
  } finally {
    clearTimeout(timer);
    if (onCut !== undefined) cut?.removeEventListener("abort", onCut);
  }
}

/** A close reason is limited to 123 bytes of UTF-8. */
function truncateUtf8(text: string, maxBytes: number): string {
  let out = text;
  while (Buffer.byteLength(out, "utf8") > maxBytes) out = out.slice(0, -1);
  return out;
}
