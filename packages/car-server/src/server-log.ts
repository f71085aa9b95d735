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

/** A `ServerLog` over a pino logger. */
export function pinoServerLog(logger: Logger): ServerLog {
  return {
    started: (info) => logger.info({ event: "server_started", ...info }, "listening"),
    connectionOpened: (conn, info) => logger.info({ event: "connection_opened", conn, ...info }, "connection opened"),
    connectionClosed: (conn, info) => logger.info({ event: "connection_closed", conn, ...info }, "connection closed"),
    authFailed: (conn, reason) => logger.warn({ event: "auth_failed", conn, reason }, "auth failed"),
    methodFinished(conn, method, durationMs, outcome) {
      const duration_ms = Math.round(durationMs * 1000) / 1000;
      if (outcome.ok) {
        logger.debug({ event: "method", conn, method, duration_ms, outcome: "ok" }, method);
        const proposal = method === "proposal.submit" ? proposalSummary(outcome.result) : undefined;
        if (proposal !== undefined) logger.info({ event: "proposal", conn, ...proposal, duration_ms }, "proposal finished");
      } else {
        const record = { event: "method", conn, method, duration_ms, outcome: "error", rpc_code: outcome.rpcCode, car_code: outcome.carCode ?? null };
        logger.info(record, method);
      }
    },
    sessionRefused: (info) => logger.error({ event: "session_refused", ...info }, "session refused"),
    shutdown: (stage, info) => logger.info({ event: "shutdown", stage, ...info }, `shutdown ${stage}`),
  };
}

const LEVEL_NAMES: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
const OMITTED = new Set(["level", "time", "msg", "pid", "hostname", "event"]);

/** One pino NDJSON record as `time LEVEL event key=value …`. */
export function humanLine(json: string): string {
  const record = JSON.parse(json) as Record<string, unknown>;
  const fields = Object.entries(record)
    .filter(([k]) => !OMITTED.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  const time = new Date(record["time"] as number).toISOString();
  return `${time} ${(LEVEL_NAMES[record["level"] as number] ?? "LOG").padEnd(5)} ${String(record["event"] ?? record["msg"])} ${fields.join(" ")}`.trimEnd();
}

/** A pino logger writing `format` records at `level` and above to `write` (stderr for `car serve`). */
export function createServerLogger(level: LogLevel, format: LogFormat, write: (line: string) => void): Logger {
  const destination = { write: (chunk: string) => write(format === "json" ? chunk.replace(/\n$/, "") : humanLine(chunk)) };
  return pino({ level, base: null, timestamp: pino.stdTimeFunctions.epochTime }, destination);
}
