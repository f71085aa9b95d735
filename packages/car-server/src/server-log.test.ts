/**
 * The human log says what the JSON log says: for the same events, each
 * human line is `time LEVEL event key=value …` over exactly the fields of
 * the matching pino record, in its order, at its level and time; and a
 * level filters both formats alike.
 */
import { describe, expect, it } from "vitest";
import { createServerLog, type LogLevel, type ServerLog } from "./server-log.ts";

const LEVEL_NAMES: Record<number, string> = { 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR" };

function drive(log: ServerLog): void {
  log.started({ url: "ws://127.0.0.1:9100/", auth: true, store: "memory" });
  log.connectionOpened(1, { remote: undefined, agent: false });
  log.connectionOpened(2, { remote: "127.0.0.1", agent: true });
  log.authFailed(1, "token_mismatch");
  log.methodFinished(2, "tools.register", 0.1234567, { ok: true, result: { registered: 1 } });
  log.methodFinished(2, "proposal.submit", 12.5, {
    ok: true,
    result: { proposal_id: "p-1", results: [{ status: "succeeded" }, { status: "failed" }, { status: "succeeded" }] },
  });
  log.methodFinished(2, "state.set", 3, { ok: false, rpcCode: -32602, carCode: "invalid_params" });
  log.methodFinished(2, "no.such", 3, { ok: false, rpcCode: -32601, carCode: undefined });
  log.sessionRefused({ code: "unauthorized" });
  log.connectionClosed(2, { requests: 4, lifetime_ms: 20 });
  log.shutdown("begin", { connections: 1 });
  log.shutdown("done");
}

function linesOf(level: LogLevel, format: "json" | "human"): string[] {
  const lines: string[] = [];
  drive(createServerLog(level, format, (line) => lines.push(line)));
  return lines;
}

/** A pino record as a human line: what the human format must print for it. */
function expectedHuman(record: Record<string, unknown>): string {
  const fields = Object.entries(record)
    .filter(([k]) => !["level", "time", "msg", "event"].includes(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return [new Date(record["time"] as number).toISOString(), (LEVEL_NAMES[record["level"] as number] ?? "LOG").padEnd(5), record["event"], ...fields].join(" ");
}

describe("server log formats", () => {
  for (const level of ["debug", "info", "warn", "silent"] as const) {
    it(`at ${level}, the human lines carry exactly the JSON records' fields`, () => {
      const records = linesOf(level, "json").map((l) => JSON.parse(l) as Record<string, unknown>);
      const human = linesOf(level, "human");
      expect(human).toHaveLength(records.length);
      human.forEach((line, i) => {
        const record = records[i]!;
        // Written moments apart: the time may differ by a few ms; everything after it must match exactly.
        const [time, ...rest] = line.split(" ");
        expect(Math.abs(Date.parse(time!) - (record["time"] as number))).toBeLessThan(1000);
        expect(rest.join(" ")).toBe(expectedHuman(record).split(" ").slice(1).join(" "));
      });
    });
  }

  it("info logs proposals and failed methods, not successful ones; debug adds them; silent logs nothing", () => {
    const events = (level: LogLevel) => linesOf(level, "json").map((l) => JSON.parse(l) as { event: string; method?: string });
    const info = events("info");
    expect(info.filter((r) => r.event === "method").map((r) => r.method)).toEqual(["state.set", "no.such"]);
    expect(info.find((r) => r.event === "proposal")).toMatchObject({ proposal_id: "p-1", statuses: { succeeded: 2, failed: 1 } });
    expect(events("debug").filter((r) => r.event === "method")).toHaveLength(4);
    expect(events("warn").map((r) => r.event)).toEqual(["auth_failed", "session_refused"]);
    expect(linesOf("silent", "human")).toEqual([]);
    const proposalLine = / INFO {2}proposal conn=2 proposal_id=p-1 statuses=\{"succeeded":2,"failed":1\} duration_ms=12.5$/;
    expect(linesOf("info", "human").filter((l) => proposalLine.test(l))).toHaveLength(1);
  });
});
