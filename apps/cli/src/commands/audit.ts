/**
 * `car audit verify` walks the database's hash chain and names the first
 * broken link. `car audit query` prints stored events filtered by proposal,
 * action, kind and time, as a table or as JSON lines. `car audit trim`
 * applies a one-off retention bound (archive or drop old events behind a
 * signed checkpoint).
 */
import { resolve } from "node:path";
import { writeFileSync } from "node:fs";
import { CarError, ERROR_CODES } from "@car/ir";
import type { CarEvent, EventQuery } from "@car/engine";
import type { ChainReport } from "@car/engine/sqlite";
import { expectPositionals, parseArgs, positiveInteger, usageError } from "../argv.ts";
import { databasePath, openCarDatabase } from "../car-database.ts";
import { println } from "../io.ts";
import { colorEnabled, colors } from "../render/color.ts";

export const usage = `Usage: car audit verify [--db PATH] [--json]
       car audit query [--proposal ID] [--action ID] [--kind KIND]... [--since TIME]
                       [--until TIME] [--limit N] [--desc] [--json] [--db PATH]
       car audit trim (--max-events N | --max-age SECONDS) [--archive FILE] [--db PATH]
       car audit report <PROPOSAL_ID> [-o FILE] [--db PATH]

verify  Checks the event log's hash chain (and the signed retention
        checkpoint it starts from, if any) and reports the first broken link.
        Exit status: 0 intact, 1 broken.
query   Prints the matching events, oldest first (--desc: newest first), as a
        table, or with --json as one JSON object per line. TIME is RFC 3339
        (--since inclusive, --until exclusive).
trim    Removes the oldest events beyond the bound — appended to FILE as JSON
        lines with --archive, else dropped — and records a signed checkpoint
        so the rest still verifies.
report  Draws one proposal's run from its stored events as a self-contained
        HTML page (the same page as car run --report): timeline, retries,
        waits, denials, rollback, cost. Written to FILE, else stdout.

The database is --db PATH, default <CAR_HOME>/car.db.`;

export async function main(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "verify") return verifyChain(rest);
  if (sub === "query") return query(rest);
  if (sub === "trim") return trim(rest);
  if (sub === "report") return report(rest);
  throw usageError(sub === undefined ? "missing subcommand: verify, query, trim or report" : `unknown subcommand '${sub}': expected verify, query, trim or report`);
}

async function report(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" }, output: { type: "string", short: "o" } });
  const [proposalId] = expectPositionals(positionals, ["PROPOSAL_ID"]);
  const store = await openCarDatabase(databasePath(options.db), { readonly: true });
  let events: CarEvent[];
  try {
    events = store.events.query({ proposal_id: proposalId! });
  } finally {
    await store.close();
  }
  if (events.length === 0) throw new CarError("not_found", `no events for proposal '${proposalId}' in ${databasePath(options.db)}`);
  const { runReportHtml, runTimeline } = await import("../render/run-report-html.ts");
  const html = runReportHtml(runTimeline(proposalId!, events));
  if (options.output !== undefined) writeFileSync(options.output, html);
  else process.stdout.write(html);
  return 0;
}

async function verifyChain(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" }, json: { type: "boolean" } });
  expectPositionals(positionals, []);
  const path = databasePath(options.db);
  const store = await openCarDatabase(path, { readonly: true });
  let report: ChainReport;
  try {
    report = store.verifyChain();
  } finally {
    await store.close();
  }
  if (options.json) println(JSON.stringify(report));
  else {
    const c = colors(colorEnabled(process.stdout));
    if (report.ok) {
      const head = report.head === null ? "the log is empty" : `head seq ${report.head.seq}, hash ${report.head.hash}`;
      const anchor = report.checkpoint === null ? "from the genesis hash" : `from the signed checkpoint after seq ${report.checkpoint.seq} (${report.checkpoint.created_at})`;
      println(`${c.green("intact")}: ${report.verified} event${report.verified === 1 ? "" : "s"} verified ${anchor}; ${head}`);
    } else {
      println(`${c.red("broken")} at seq ${report.broken.seq}: ${report.broken.reason} (${report.verified} event${report.verified === 1 ? "" : "s"} verified before it)`);
    }
  }
  return report.ok ? 0 : ERROR_CODES.chain_broken.exit;
}

function time(value: string | undefined, option: string): string | undefined {
  if (value === undefined) return undefined;
  if (Number.isNaN(Date.parse(value))) throw usageError(`${option} must be an RFC 3339 time, got '${value}'`);
  return value;
}

async function query(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, {
    db: { type: "string" },
    proposal: { type: "string" },
    action: { type: "string" },
    kind: { type: "string", multiple: true },
    since: { type: "string" },
    until: { type: "string" },
    limit: { type: "string" },
    desc: { type: "boolean" },
    json: { type: "boolean" },
  });
  expectPositionals(positionals, []);
  const filter: EventQuery = {
    ...(options.proposal !== undefined ? { proposal_id: options.proposal } : {}),
    ...(options.action !== undefined ? { action_id: options.action } : {}),
    ...(options.kind !== undefined ? { kinds: options.kind } : {}),
    ...(options.since !== undefined ? { since: time(options.since, "--since")! } : {}),
    ...(options.until !== undefined ? { until: time(options.until, "--until")! } : {}),
    ...(options.limit !== undefined ? { limit: positiveInteger(options.limit, "--limit") } : {}),
    ...(options.desc ? { order: "desc" as const } : {}),
  };
  const store = await openCarDatabase(databasePath(options.db), { readonly: true });
  let events: CarEvent[];
  try {
    events = store.events.query(filter);
  } finally {
    await store.close();
  }
  if (options.json) {
    for (const event of events) println(JSON.stringify(event));
    return 0;
  }
  println(eventTable(events));
  return 0;
}

const SUMMARY_WIDTH = 60;

/** A fixed-width table: seq, time, kind, proposal, action, and the data, compacted. */
function eventTable(events: readonly CarEvent[]): string {
  const rows = events.map((e) => {
    const data = JSON.stringify(e.data);
    return [String(e.seq), e.timestamp, e.kind, e.proposal_id ?? "-", e.action_id ?? "-", data.length > SUMMARY_WIDTH ? `${data.slice(0, SUMMARY_WIDTH - 1)}…` : data];
  });
  const header = ["SEQ", "TIME", "KIND", "PROPOSAL", "ACTION", "DATA"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  return [line(header), ...rows.map(line), `(${events.length} event${events.length === 1 ? "" : "s"})`].join("\n");
}

async function trim(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, {
    db: { type: "string" },
    "max-events": { type: "string" },
    "max-age": { type: "string" },
    archive: { type: "string" },
  });
  expectPositionals(positionals, []);
  const maxEvents = options["max-events"] === undefined ? undefined : positiveInteger(options["max-events"], "--max-events");
  const maxAge = options["max-age"] === undefined ? undefined : positiveInteger(options["max-age"], "--max-age");
  if (maxEvents === undefined && maxAge === undefined) throw usageError("give --max-events or --max-age");
  const store = await openCarDatabase(databasePath(options.db));
  try {
    const result = store.enforceRetention(Date.now(), {
      mode: options.archive !== undefined ? "archive" : "truncate",
      ...(options.archive !== undefined ? { archive_path: resolve(options.archive) } : {}),
      ...(maxEvents !== undefined ? { max_events: maxEvents } : {}),
      ...(maxAge !== undefined ? { max_age_ms: maxAge * 1000 } : {}),
    });
    const where = options.archive !== undefined ? ` (archived to ${resolve(options.archive)})` : "";
    println(result.removed === 0 ? "nothing to remove" : `removed ${result.removed} event${result.removed === 1 ? "" : "s"}${where}; the chain now starts after seq ${result.checkpoint!.checkpoint.seq}`);
    return 0;
  } finally {
    await store.close();
  }
}
