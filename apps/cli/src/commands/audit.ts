/**
 * `car audit verify` walks the database's hash chain (with the audit key:
 * every event's MAC), checks the anchors kept outside the database, replays
 * the log against the stored state, and names the first broken link.
 * `car audit anchor` writes the chain head down outside the database.
 * `car audit query` prints stored events filtered by proposal, action, kind
 * and time, as a table or as JSON lines. `car audit trim` applies a one-off
 * retention bound (archive or drop old events behind a signed checkpoint).
 * Every subcommand works on SQLite and on PostgreSQL.
 */
import { join, resolve } from "node:path";
import { writeFileSync } from "node:fs";
import { CarError, ERROR_CODES } from "@car/ir";
import type { CarEvent, EventQuery } from "@car/engine";
import type { ChainReport, LogCut } from "@car/engine";
import { type Anchor, appendAnchor, readAnchors } from "@car/store-sqlite";
import { expectPositionals, parseArgs, positiveInteger, usageError } from "@car/server/argv";
import { ANCHOR_FILE, auditKeyPath, databasePath, isPostgresUrl, openCarDatabase, openPostgres, resolveCarHome } from "@car/server/home";
import { eprintln, println } from "../io.ts";
import { colorEnabled, colors } from "../render/color.ts";

export const usage = `Usage: car audit verify [--db PATH|URL] [--anchors FILE] [--require-key] [--json]
       car audit anchor [--db PATH|URL] [--file FILE | --print]
       car audit query [--proposal ID] [--action ID] [--kind KIND]... [--since TIME]
                       [--until TIME] [--limit N] [--desc] [--json] [--db PATH|URL]
       car audit trim (--max-events N | --max-age SECONDS) [--archive FILE] [--db PATH|URL]
       car audit report <PROPOSAL_ID> [-o FILE] [--db PATH|URL]

verify  Checks the event log's hash chain (and the signed retention
        checkpoint it starts from, if any), every event's MAC under the audit
        key, the anchors of this database in FILE (default
        <CAR_HOME>/anchors.jsonl) — each names the database's id and where it
        lives, so an anchored location under another id is a break, and no
        anchor at all a warning — that every table the runtime trusts
        (approvals, postures, proposals, transitions) is what the log
        says, and that the stored state is what the log replays to;
        reports the first broken link (or differing row or key).
        With the audit key every event must carry a valid MAC: one without
        (its MAC stripped, the chain rehashed) is a break. Without the key
        the log is "unkeyed": only accidental damage is detected, which is
        said, and --require-key makes that a failure.
        Exit status: 0 intact, 1 broken (or unkeyed with --require-key).
anchor  Appends the chain head (database id, seq, hash, time) to FILE
        (default <CAR_HOME>/anchors.jsonl) as a JSON line, or with --print
        writes it to stdout for an external witness. Keep anchors where the
        database's writers cannot reach: a truncated or rolled-back log is
        caught only against them.
query   Prints the matching events, oldest first (--desc: newest first), as a
        table, or with --json as one JSON object per line. TIME is RFC 3339
        (--since inclusive, --until exclusive).
trim    Removes the oldest events beyond the bound — appended to FILE as JSON
        lines with --archive, else dropped — and records a signed checkpoint
        so the rest still verifies.
report  Draws one proposal's run from its stored events as a self-contained
        HTML page (the same page as car run --report): timeline, retries,
        waits, denials, rollback, cost. Written to FILE, else stdout.

The database is --db PATH (a SQLite file, default <CAR_HOME>/car.db) or a
postgres:// URL; the audit key is <CAR_HOME>/audit.key.`;

export async function main(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "verify") return verifyChain(rest);
  if (sub === "anchor") return anchor(rest);
  if (sub === "query") return query(rest);
  if (sub === "trim") return trim(rest);
  if (sub === "report") return report(rest);
  throw usageError(
    sub === undefined
      ? "missing subcommand: verify, anchor, query, trim or report"
      : `unknown subcommand '${sub}': expected verify, anchor, query, trim or report`,
  );
}

async function report(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" }, output: { type: "string", short: "o" } });
  const [proposalId] = expectPositionals(positionals, ["PROPOSAL_ID"]);
  const store = await openAuditStore(options.db);
  let events: CarEvent[];
  try {
    events = await store.query({ proposal_id: proposalId! });
  } finally {
    await store.close();
  }
  if (events.length === 0)
    throw new CarError(
      "not_found",
      `no events for proposal '${proposalId}' in ${isPostgresUrl(options.db) ? "the PostgreSQL database" : databasePath(options.db)}`,
    );
  const { runReportHtml, runTimeline } = await import("@car/server/run-report");
  const html = runReportHtml(runTimeline(proposalId!, events));
  if (options.output !== undefined) writeFileSync(options.output, html);
  else process.stdout.write(html);
  return 0;
}

/** What verify, anchor and query need from either backend. */
interface AuditStore {
  verify(anchors: readonly Anchor[]): Promise<ChainReport>;
  anchor(): Promise<Anchor | null>;
  query(filter: EventQuery): Promise<CarEvent[]>;
  close(): Promise<void>;
}

/** The database `--db` names, read-only where the backend allows it (SQLite). */
async function openAuditStore(db: string | undefined): Promise<AuditStore> {
  if (isPostgresUrl(db)) {
    const store = await openPostgres(db, { readonlyKey: true });
    return {
      verify: (anchors) => store.verifyChain({ anchors }),
      anchor: () => store.anchor(),
      query: (filter) => store.events.queryShared(filter),
      close: () => store.close(),
    };
  }
  const store = await openCarDatabase(databasePath(db), { readonly: true });
  return {
    verify: async (anchors) => store.verifyChain({ anchors }),
    anchor: async () => store.anchor(),
    query: async (filter) => store.events.query(filter),
    close: () => store.close(),
  };
}

function anchorFile(option: string | undefined): string {
  return option !== undefined ? resolve(option) : join(resolveCarHome(), ANCHOR_FILE);
}

async function verifyChain(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, {
    db: { type: "string" },
    anchors: { type: "string" },
    json: { type: "boolean" },
    "require-key": { type: "boolean" },
  });
  expectPositionals(positionals, []);
  const anchors = readAnchors(anchorFile(options.anchors));
  const store = await openAuditStore(options.db);
  let report: ChainReport;
  try {
    report = await store.verify(anchors);
  } finally {
    await store.close();
  }
  if (options.json) println(JSON.stringify(report));
  else {
    const c = colors(colorEnabled(process.stdout));
    if (report.ok) {
      const head = report.head === null ? "the log is empty" : `head seq ${report.head.seq}, hash ${report.head.hash}`;
      const anchor =
        report.checkpoint === null
          ? "from the genesis hash"
          : `from the signed checkpoint after seq ${report.checkpoint.seq} (${report.checkpoint.created_at})`;
      // A cut log is never just "intact": each cut is named first (DECISIONS §24).
      for (const cut of report.cuts) println(c.yellow(cutLine(cut)));
      const verdict = report.cuts.length === 0 ? "intact" : `intact after ${report.cuts.length} cut${report.cuts.length === 1 ? "" : "s"}`;
      println(`${c.green(verdict)}: ${report.verified} event${report.verified === 1 ? "" : "s"} verified ${anchor}; ${head}`);
      for (const line of verifyNotes(report)) println(line.startsWith("warning") ? c.yellow(line) : line);
    } else {
      println(
        `${c.red("broken")} at seq ${report.broken.seq}: ${report.broken.reason} (${report.verified} event${report.verified === 1 ? "" : "s"} verified before it)`,
      );
    }
  }
  if (!report.ok) return ERROR_CODES.chain_broken.exit;
  if (!report.keyed && options["require-key"] === true) {
    eprintln(`car audit verify: --require-key: there is no audit key at ${auditKeyPath()}, so the log's MACs cannot be checked`);
    return ERROR_CODES.chain_broken.exit;
  }
  return 0;
}

/** `cut: seq 1–40 (40 events) dropped by retention at <time>`. */
function cutLine(cut: LogCut): string {
  const range = cut.first_removed_seq === cut.last_removed_seq ? `seq ${cut.first_removed_seq}` : `seq ${cut.first_removed_seq}–${cut.last_removed_seq}`;
  const how = cut.mode === "archive" ? `archived to ${cut.archive_path} and removed` : "dropped";
  const by = cut.act === "retention" ? "retention" : `events.${cut.act}`;
  return `cut: ${range} (${cut.removed} event${cut.removed === 1 ? "" : "s"}) ${how} by ${by} at ${cut.created_at}`;
}

/** What an intact report did and did not cover, one line each. */
function verifyNotes(report: Extract<ChainReport, { ok: true }>): string[] {
  const notes: string[] = [];
  if (report.keyed) notes.push("every event's MAC verifies under the audit key");
  else
    notes.push(
      `warning: unkeyed: only integrity against accidental damage is checked (no audit key at ${auditKeyPath()}: a rewrite that recomputed the hashes would pass, and the approval and posture rows' seals are plain SHA-256 anyone can recompute)`,
    );
  const anchors = report.anchors;
  if (anchors === undefined || anchors.checked === 0)
    notes.push("warning: no anchor for this database: a truncated or rolled-back log would not be noticed (car audit anchor)");
  else
    notes.push(`${anchors.checked} anchor${anchors.checked === 1 ? "" : "s"} hold; the newest is seq ${anchors.newest!.seq} (${anchors.newest!.anchored_at})`);
  const state = report.state;
  if (state !== undefined)
    notes.push(
      state.compared
        ? `the stored state (${state.keys} key${state.keys === 1 ? "" : "s"}) is what the log replays to`
        : `warning: the stored state was not compared: ${state.reason}`,
    );
  return notes;
}

async function anchor(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" }, file: { type: "string" }, print: { type: "boolean" } });
  expectPositionals(positionals, []);
  if (options.print && options.file !== undefined) throw usageError("give --file or --print, not both");
  const store = await openAuditStore(options.db);
  let head: Anchor | null;
  try {
    head = await store.anchor();
  } finally {
    await store.close();
  }
  if (head === null) throw usageError("the log is empty: there is no head to anchor yet");
  if (options.print) {
    println(JSON.stringify(head));
    return 0;
  }
  const file = anchorFile(options.file);
  appendAnchor(file, head);
  println(`anchored seq ${head.seq} (hash ${head.hash}) in ${file}`);
  return 0;
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
  const store = await openAuditStore(options.db);
  let events: CarEvent[];
  try {
    events = await store.query(filter);
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
    return [
      String(e.seq),
      e.timestamp,
      e.kind,
      e.proposal_id ?? "-",
      e.action_id ?? "-",
      data.length > SUMMARY_WIDTH ? `${data.slice(0, SUMMARY_WIDTH - 1)}…` : data,
    ];
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
  // Cutting the log writes its checkpoint: the store opens writable (the checkpoint key may be created).
  const store = isPostgresUrl(options.db) ? await openPostgres(options.db) : await openCarDatabase(databasePath(options.db));
  try {
    const result = await store.enforceRetention(Date.now(), {
      mode: options.archive !== undefined ? "archive" : "truncate",
      ...(options.archive !== undefined ? { archive_path: resolve(options.archive) } : {}),
      ...(maxEvents !== undefined ? { max_events: maxEvents } : {}),
      ...(maxAge !== undefined ? { max_age_ms: maxAge * 1000 } : {}),
    });
    const where = options.archive !== undefined ? ` (archived to ${resolve(options.archive)})` : "";
    println(
      result.removed === 0
        ? "nothing to remove"
        : `removed ${result.removed} event${result.removed === 1 ? "" : "s"}${where}; the chain now starts after seq ${result.checkpoint!.checkpoint.seq}`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
