/**
 * `car replay`: a recorded proposal, read back from the audit log — shown
 * with the state the log reconstructs (the reference's `car replay`),
 * re-checked against today's gate, policies and state (`--check`), or run
 * again (`--run`). The log is verified first (hash chain, MACs under the
 * audit key, anchors): what a log that does not verify records is not
 * acted on, not even shown (`chain_broken`, exit 1).
 *
 * A re-run is `car run` on the recorded proposal: the same admission, the
 * same gate at the run's standing tier, a new run id — so an approval
 * scoped to the recorded run does not carry over, and nothing is bypassed.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { CarError, type JsonValue, parseProposalWithGraph } from "@car/ir";
import { Runtime } from "@car/engine";
import type { SqliteStore } from "@car/store-sqlite";
import type { PostgresStore } from "@car/store-postgres";
import { readAnchors } from "@car/engine/durable";
import { ApprovalGate, isPermissionTier } from "@car/policy";
import { policyDirs } from "@car/policy/gate";
import { expectPositionals, parseArgs, usageError } from "@car/server/argv";
import { postureWithDefault } from "@car/server/postures";
import { ANCHOR_FILE, databasePath, isPostgresUrl, openCarDatabase, openPostgres, resolveCarHome, storedEvents } from "@car/server/home";
import { println, readText } from "../io.ts";
import { readJournal } from "../replay/journal.ts";
import { type Recheck, recheck } from "../replay/recheck.ts";
import { type RecordedRun, recordedRun } from "../replay/recorded-run.ts";
import { RUN_OPTIONS, runProposalWith } from "./run.ts";

export const usage = `Usage: car replay <PROPOSAL_ID | RUN_ID> [--db PATH|URL] [--json]
       car replay <JOURNAL> [PROPOSAL_ID | RUN_ID] [--json]
       car replay <PROPOSAL_ID | RUN_ID> --check [--policies DIR]... [--tier TIER] [--agent ID] [--json] [--db PATH|URL]
       car replay <PROPOSAL_ID | RUN_ID> --run --tools FILE [car run options]

Reads a recorded run from the database's audit log — by its run id, or by
its proposal id (that proposal's latest run) — after verifying the log: the
hash chain, every MAC under the audit key, and the anchors in
<CAR_HOME>/anchors.jsonl. A log that does not verify is refused (exit 1,
error chain_broken) and nothing it records is shown or acted on.

(no flag)  Shows the run: the proposal, how each action ended, what it
           committed, and the state the log reconstructs at its end.
--check    Re-checks the recorded proposal as it would be admitted today,
           without running or recording anything: the approval gate at the
           standing tier (--tier, default sandbox_edit; --agent's postures)
           on the database's ledger, the policy rules (--policies, default
           <CAR_HOME>/policies and every .car/policies down to here), static
           verification against the current state; and it simulates the plan
           again from the state the run started from, against what it
           committed. Prints each difference. Exit status: 0 none, 1 some.
<JOURNAL>  A file of events as JSON lines (car run --events, car audit
           query --json; - for stdin), shown like a run from the database
           (its latest run unless an id is given) once every event's hash
           matches its content and consecutive events link. Without the
           audit key that guards against accidental damage only; a journal
           without hashes is refused.
--run      Runs the recorded proposal again, exactly as car run would run
           it (every car run option applies; --tools is required): the same
           admission and approval gate, under a new run id, so an approval
           scoped to the recorded run does not carry over.

Options:
  --db <PATH|URL>   The database [default: <CAR_HOME>/car.db]
  --json            Print the run (or the re-check) as JSON`;

/** Either durable backend: both keep the hash-chained log replay reads. */
type ReplayStore = SqliteStore | PostgresStore;

const OWN_OPTIONS = { check: { type: "boolean" }, run: { type: "boolean" } } as const;

/** The options that make sense without --run. */
const SHOW_OPTIONS = new Set(["db", "json", "check", "run"]);
const CHECK_OPTIONS = new Set(["db", "json", "policies", "tier", "agent", "check", "run"]);

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { ...RUN_OPTIONS, ...OWN_OPTIONS });
  if (positionals[0] !== undefined && isJournal(positionals[0])) return replayJournal(positionals, options);
  const [id] = expectPositionals(positionals, ["PROPOSAL_ID | RUN_ID"]);
  if (options.check === true && options.run === true) throw usageError("--check and --run exclude each other: check first, then run");
  if (options.run !== true) {
    // No option is accepted and ignored: car run's options belong to --run.
    const allowed = options.check === true ? CHECK_OPTIONS : SHOW_OPTIONS;
    const stray = Object.keys(options).find((name) => !allowed.has(name));
    if (stray !== undefined) throw usageError(`--${stray} applies to ${CHECK_OPTIONS.has(stray) ? "--check and --run" : "--run"} only`);
  }
  const store = await openForReading(options.db);
  let run: RecordedRun;
  let check: Recheck | undefined;
  try {
    await requireVerifiedLog(store, id!);
    run = recordedRun(await storedEvents(store.events, {}), id!);
    if (options.check === true) check = await recheckRun(run, store, options);
  } finally {
    await store.close?.();
  }
  if (options.run === true) {
    const { run: _run, check: _check, ...runOptions } = options;
    return runProposalWith(runOptions, async () => parseProposalWithGraph(run.proposal, { strict: options.strict === true }));
  }
  if (check !== undefined) {
    if (options.json === true) println(JSON.stringify({ ...summaryOf(run), check }, null, 2));
    else println(checkText(run, check));
    return check.differences.length === 0 ? 0 : 1;
  }
  if (options.json === true) println(JSON.stringify({ ...summaryOf(run), state: run.state_after }, null, 2));
  else println(showText(run));
  return 0;
}

/** `-` or an existing regular file: the reference's `car replay <JOURNAL>`. */
function isJournal(argument: string): boolean {
  if (argument === "-") return true;
  try {
    return statSync(argument).isFile();
  } catch {
    return false;
  }
}

/** `car replay <JOURNAL> [ID]`: shows a run the journal records (its latest without ID), once every event vouches for itself. */
async function replayJournal(positionals: string[], options: Record<string, unknown>): Promise<number> {
  if (positionals.length > 2) throw usageError(`unexpected argument '${positionals[2]}'`);
  const stray = Object.keys(options).find((name) => name !== "json");
  if (stray !== undefined) throw usageError(`--${stray} works on the database (car replay <PROPOSAL_ID | RUN_ID>), not on a journal file`);
  const path = positionals[0]!;
  const journal = readJournal(await readText(path, "journal"), path);
  const run = recordedRun(journal.events, positionals[1], path);
  if (options["json"] === true)
    println(JSON.stringify({ ...summaryOf(run), state: run.state_after, journal: { path, events: journal.events.length, gaps: journal.gaps } }, null, 2));
  else {
    const gaps =
      journal.gaps === 0
        ? ""
        : `; it skips ${journal.gaps} stretch${journal.gaps === 1 ? "" : "es"} of the log, so the state below holds only what the journal records`;
    println(
      showText(run, `the journal's ${journal.events.length} events verify (hashes and links; without the audit key, against accidental damage only)${gaps}`),
    );
  }
  return 0;
}

/** The database, read-only where the backend allows it (SQLite). */
async function openForReading(db: string | undefined): Promise<ReplayStore> {
  if (db === ":memory:") throw usageError("--db :memory: keeps no log to replay");
  return isPostgresUrl(db) ? openPostgres(db, { readonlyKey: true }) : openCarDatabase(databasePath(db), { readonly: true });
}

/** Refuses (`chain_broken`) a log whose chain, MACs or anchors do not verify. */
async function requireVerifiedLog(store: ReplayStore, id: string): Promise<void> {
  const report = await store.verifyChain({ anchors: readAnchors(join(resolveCarHome(), ANCHOR_FILE)) });
  if (report.ok) return;
  const { seq, reason } = report.broken;
  throw new CarError(
    "chain_broken",
    `cannot replay '${id}': the audit log does not verify (seq ${seq}: ${reason}), so nothing it records is replayed (car audit verify says more)`,
    { seq, reason },
  );
}

async function recheckRun(run: RecordedRun, store: ReplayStore, options: { policies?: string[]; tier?: string; agent?: string }): Promise<Recheck> {
  const tier = options.tier ?? "sandbox_edit";
  if (!isPermissionTier(tier)) throw usageError(`--tier must be read_only, sandbox_edit or full_access, got '${tier}'`);
  // A runtime of its own, in memory, only to hold today's rules: nothing of it touches the database.
  const rules = new Runtime();
  try {
    const dirs = options.policies ?? policyDirs(process.cwd(), { carHome: resolveCarHome() });
    for (const dir of dirs) rules.loadPolicies(dir);
    const gate = new ApprovalGate({
      ledger: store.approvals,
      sessionId: "car-replay",
      grantedTier: tier,
      ...(options.agent !== undefined ? { agentId: options.agent, posture: postureWithDefault(store.postures, options.agent) } : {}),
    });
    const current = store.state.snapshot() as Record<string, JsonValue>;
    return await recheck(run, parseProposalWithGraph(run.proposal), { gate, policies: rules.policies, traceRules: rules.traceGate.rules(), current });
  } finally {
    await rules.close();
  }
}

function summaryOf(run: RecordedRun) {
  const { state_before: _before, state_after: _after, ...summary } = run;
  return summary;
}

function actionLines(run: RecordedRun): string[] {
  const width = Math.max(...run.actions.map((a) => a.action_id.length), 6);
  return run.actions.map((a) => {
    const why = a.status === "rejected" || a.status === "failed" ? ` (${[a.stage, a.reason].filter((x) => x !== undefined).join(": ")})` : "";
    return `  ${a.action_id.padEnd(width)}  ${(a.tool ?? "-").padEnd(12)}  ${a.status}${why}`;
  });
}

function headerLines(run: RecordedRun, verified = "the audit log verifies"): string[] {
  return [`proposal ${run.proposal_id}  run ${run.run_id}  received ${run.received_at}  outcome ${run.outcome}`, verified, "actions:", ...actionLines(run)];
}

function showText(run: RecordedRun, verified?: string): string {
  const writes = Object.entries(run.writes);
  const keys = Object.keys(run.state_after).sort();
  return [
    ...headerLines(run, verified),
    writes.length === 0 ? "committed: nothing" : "committed:",
    ...writes.map(([key, value]) => `  ${key} = ${value === null ? "(deleted)" : JSON.stringify(value)}`),
    `state after the run (reconstructed from the log, ${keys.length} key${keys.length === 1 ? "" : "s"}):`,
    ...keys.map((key) => `  ${key} = ${JSON.stringify(run.state_after[key])}`),
  ].join("\n");
}

function checkText(run: RecordedRun, check: Recheck): string {
  const now = check.actions.map((a) => {
    const notes = [
      a.gate === "allow" ? "gate allows" : `gate: ${a.gate} (fingerprint ${a.fingerprint} requires ${a.required}, granted ${a.granted})`,
      ...a.policy_denials.map((d) => `policy denies: ${d}`),
      ...a.verify_errors.map((e) => `verify: ${e}`),
    ];
    return `  ${a.action_id}: ${notes.join("; ")}`;
  });
  return [
    ...headerLines(run),
    `today (nothing run or recorded): admission ${check.admitted_now ? "would admit" : "would refuse"} the proposal`,
    ...now,
    check.differences.length === 0 ? "no differences" : `${check.differences.length} difference${check.differences.length === 1 ? "" : "s"}:`,
    ...check.differences.map((d) => `  ${d.action_id ?? "(plan)"}: ${d.what}`),
  ].join("\n");
}
