/**
 * What `car serve` tells its operator, as pino records: start-up,
 * connections, auth failures, each method with its duration and outcome,
 * each proposal's outcome, shutdown. A record carries names, counts, codes
 * and durations only — never a token, a parameter value or an error message
 * (messages can quote parameters) — so logs can be shipped anywhere.
 * `json` writes pino's NDJSON; `human` one readable line per record.
 */
import { getOwn, isJsonObject, type JsonValue } from "@car/ir";
import { pino, type Logger } from "pino";

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ["json", "human"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export type MethodOutcome = { ok: true; result: JsonValue } | { ok: false; rpcCode: number; carCode: string | undefined };

/** The events a server reports; every method takes only what is safe to log. */
export interface ServerLog {
  started(info: { url: string; auth: boolean; store: string }): void;
  connectionOpened(conn: number, info: { remote: string | undefined; agent: boolean }): void;
  connectionClosed(conn: number, info: { requests: number; lifetime_ms: number }): void;
  authFailed(conn: number, reason: "token_mismatch" | "not_authenticated"): void;
  methodFinished(conn: number, method: string, durationMs: number, outcome: MethodOutcome): void;
  sessionRefused(info: { code: string }): void;
  shutdown(stage: "begin" | "cancelling" | "done", info?: { connections: number }): void;
}

/** Logs nothing: the library default, so embedding the server stays quiet. */
export const silentServerLog: ServerLog = {
  started() {},
  connectionOpened() {},
  connectionClosed() {},
  authFailed() {},
  methodFinished() {},
  sessionRefused() {},
  shutdown() {},
};

/** The statuses of a `proposal.submit` result, counted; undefined for any other result. */
function proposalSummary(result: JsonValue): { proposal_id: string; statuses: Record<string, number> } | undefined {
  if (!isJsonObject(result)) return undefined;
  const id = getOwn(result, "proposal_id");
  const results = getOwn(result, "results");
  if (typeof id !== "string" || !Array.isArray(results)) return undefined;
  const statuses: Record<string, number> = {};
  for (const r of results) {
    const status = isJsonObject(r) ? getOwn(r, "status") : undefined;
    if (typeof status === "string") statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return { proposal_id: id, statuses };
}

type RecordLevel = "debug" | "info" | "warn" | "error";
type LogRecord = Record<string, unknown>;
/** Writes one record at `level`, with `msg` as pino's message. */
type Emit = (level: RecordLevel, record: LogRecord, msg: string) => void;

/** The records of a `ServerLog`, each built only when its level is on. */
function serverLogOver(emit: Emit, enabled: (level: RecordLevel) => boolean): ServerLog {
  return {
    started: (info) => emit("info", { event: "server_started", ...info }, "listening"),
    connectionOpened: (conn, info) => emit("info", { event: "connection_opened", conn, ...info }, "connection opened"),
    connectionClosed: (conn, info) => emit("info", { event: "connection_closed", conn, ...info }, "connection closed"),
    authFailed: (conn, reason) => emit("warn", { event: "auth_failed", conn, reason }, "auth failed"),
    methodFinished(conn, method, durationMs, outcome) {
      // Every method record is at info or below it (debug): none is built when info is off.
      if (!enabled("info")) return;
      const duration_ms = Math.round(durationMs * 1000) / 1000;
      if (outcome.ok) {
        if (enabled("debug")) emit("debug", { event: "method", conn, method, duration_ms, outcome: "ok" }, method);
        const proposal = method === "proposal.submit" ? proposalSummary(outcome.result) : undefined;
        if (proposal !== undefined) emit("info", { event: "proposal", conn, ...proposal, duration_ms }, "proposal finished");
      } else {
        emit("info", { event: "method", conn, method, duration_ms, outcome: "error", rpc_code: outcome.rpcCode, car_code: outcome.carCode ?? null }, method);
      }
    },
    sessionRefused: (info) => emit("error", { event: "session_refused", ...info }, "session refused"),
    shutdown: (stage, info) => emit("info", { event: "shutdown", stage, ...info }, `shutdown ${stage}`),
  };
}

/** A `ServerLog` over a pino logger. */
export function pinoServerLog(logger: Logger): ServerLog {
  return serverLogOver(
    (level, record, msg) => logger[level](record, msg),
    (level) => logger.isLevelEnabled(level),
  );
}

const LEVEL_VALUES: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Number.POSITIVE_INFINITY };
const LEVEL_NAMES: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
const OMITTED = new Set(["level", "time", "msg", "pid", "hostname", "event"]);

/**
 * One record as `time LEVEL event key=value …`: the record's fields in
 * order, a string as it is, anything else as JSON, an undefined field left
 * out (as pino's JSON leaves it out).
 */
export function humanLine(level: number, time: number, record: LogRecord): string {
  let line = `${new Date(time).toISOString()} ${(LEVEL_NAMES[level] ?? "LOG").padEnd(5)} ${String(record["event"] ?? record["msg"])}`;
  for (const key in record) {
    const value = record[key];
    if (value === undefined || OMITTED.has(key)) continue;
    line += ` ${key}=${typeof value === "string" ? value : JSON.stringify(value)}`;
  }
  return line;
}

/**
 * A `ServerLog` writing `format` records at `level` and above to `write`
 * (stderr for `car serve`). `json` is pino's NDJSON; `human` formats each
 * record straight from its fields (no JSON written only to be parsed again).
 */
export function createServerLog(level: LogLevel, format: LogFormat, write: (line: string) => void): ServerLog {
  if (format === "json") {
    const destination = { write: (chunk: string) => write(chunk.replace(/\n$/, "")) };
    return pinoServerLog(pino({ level, base: null, timestamp: pino.stdTimeFunctions.epochTime }, destination));
  }
  const threshold = LEVEL_VALUES[level];
  const enabled = (at: RecordLevel): boolean => LEVEL_VALUES[at] >= threshold;
  return serverLogOver((at, record) => {
    if (enabled(at)) write(humanLine(LEVEL_VALUES[at], Date.now(), record));
  }, enabled);
}
