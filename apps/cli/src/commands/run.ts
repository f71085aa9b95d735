/**
 * `car run`: verify a proposal, load its tools and the project's policies,
 * execute it on @car/engine with live progress, and print the
 * ProposalResult. The exit code says how it went (0 all clear, 1 something
 * failed or was refused, 2 bad usage or input).
 */
import { createWriteStream, writeFileSync, type WriteStream } from "node:fs";
import { extname, resolve } from "node:path";
import { type ActionProposal, CarError, ERROR_CODES, type JsonObject, jsonEquals, type ParsedProposal, serializeProposalResult, unknownFields } from "@car/ir";
import {
  type ApprovalWait,
  ApprovalWaits,
  type CarEvent,
  type GatedAction,
  isAuditedStore,
  type ProposalOutcome,
  Runtime,
  type RuntimeStore,
} from "@car/engine";
import { ApprovalGate, isPermissionTier, type PermissionTier } from "@car/policy";
import { policyDirs, sandboxMode } from "@car/policy/gate";
import { verify } from "@car/verify";
import { expectPositionals, type OptionSpecs, type ParsedArgs, parseArgs, parseDurationMs, positiveInteger, usageError } from "@car/server/argv";
import { postureWithDefault } from "@car/server/postures";
import { isPostgresUrl, openRuntimeStore, resolveCarHome } from "@car/server/home";
import { loadJsonObject, loadParsedProposal, MODULE_EXTENSIONS } from "../inputs.ts";
import { eprintln, println, readJson } from "../io.ts";
import { type Colors, colorEnabled, colors } from "../render/color.ts";
import { progressLine, resultSummary, ShownOnce } from "../render/run-progress.ts";
import type { LoadedTool } from "../tools/loaded-tool.ts";
import { loadToolModule } from "../tools/module-tools.ts";
import { openSandbox, type OsSandbox, SandboxUnavailableError } from "../sandbox/os-sandbox.ts";
import { loadRules, sandboxSettingsFor } from "../sandbox/policy-sandbox.ts";
import { programTool } from "../tools/program-runner.ts";
import { parseProgramTools } from "../tools/program-tools.ts";

export const usage = `Usage: car run <proposal.json | -> --tools <tools.mjs | tools.json> [options]

Verifies the proposal, loads its tools and policies, executes it with the
CAR runtime and prints the ProposalResult. Progress goes to stderr.

Tools:
  tools.mjs   an ES module with one export per tool: a function
              (params, ctx) => output, or { schema, handler }
  tools.json  { "<tool>": { "command": ["prog", "arg"], "timeout_ms": 60000,
              "schema": {...} } }: the program gets the call JSON on stdin and
              prints the result JSON on stdout

Options:
  --tools <FILE>          The tools (required)
  --policies <DIR>        Policy directory (repeatable); default: <CAR_HOME>/policies
                          and every .car/policies from the repository root down to here
  --state <FILE>          Initial state (a JSON object): seeds the database before
                          the run. A key the database does not hold is written; one
                          it holds with the same value is left alone; one it holds
                          with another value refuses the run (exit 2, nothing
                          written): start on a fresh --db (or --db :memory:)
  --strict                A field the spec does not name (a typo such as
                          'dependecies') refuses the proposal (exit 2); without it
                          each is a warning with a did-you-mean, kept as is
  --events <FILE>         Append the proposal's events to FILE as JSON lines: exactly
                          what the durable log holds for it
  --report <FILE>         Write the run as a self-contained HTML page: a timeline of
                          the actions (status, durations, retries, waits, denials,
                          rollback) and the cost summary
  --max-concurrency <N>   At most N actions in flight
  --rollback <MODE>       What an abort undoes: state (default) restores state only;
                          compensate also runs the compensation of every succeeded
                          compensable action, in reverse order
  --db <PATH|URL>         The SQLite database for state, events and approvals
                          (default <CAR_HOME>/car.db; :memory: keeps nothing),
                          or a postgres:// URL shared by runtimes on many hosts
  --tier <TIER>           The run's standing permission tier: read_only,
                          sandbox_edit (default) or full_access
  --agent <ID>            Run as this agent: its postures (car approvals
                          set-posture, or the default: car approvals default)
                          refine the tier gate
  --wait-for-approval <D> Wait up to D (500ms, 30s, 5m, 1h) for the approvals the
                          proposal needs instead of rejecting it: stderr names each
                          fingerprint; 'car approvals approve|reject' in another
                          terminal releases it; nothing runs before the decision
  --json                  Print the ProposalResult as JSON on stdout, no progress
  --no-sandbox            Run program tools outside the OS sandbox a policy asks for
                          (refused when a policy says sandbox = "required")
  --sandbox               Require the sandbox: fail (exit 1) where it cannot start

Sandbox: when a policy asks for it (sandbox = true), every program of a
tools.json runs inside an OS sandbox (@anthropic-ai/sandbox-runtime; on Linux
bubblewrap, socat and ripgrep must be installed): network only to the
policy's allowed hosts, no writes outside the workspace and the temp
directory or to a protected path. Where it cannot start, car says so on
stderr and runs them without it, judged by the policy rules alone; with
sandbox = "required" or --sandbox the run fails instead and nothing runs.

Approvals: before anything runs, every action is classified (read_only,
sandbox_edit, full_access). If one needs more than the standing tier, or is
full_access (always a human's decision), the whole proposal is rejected and
nothing runs; stderr names each action's fingerprint with the required and
granted tier and the command that approves it (car approvals approve
<FINGERPRINT>). The approval is recorded in the database, so the same run
then passes. With --wait-for-approval the run waits for those decisions
instead (each read from the database as it lands); what is still undecided
at the deadline is rejected.

Exit status: 0 every action succeeded (or was skipped by its own choice: a
warning line names the skip actions whose tool failed), 1 an action failed,
was rejected (an approval is missing: "approval needed:" lines on stderr,
error code approval_denied) or the run was cancelled, or the store refused the commit for a
conflict (a stderr line starting "commit refused:" names the keys; error
code stale_read / write_conflict), 2 bad usage or input.`;

/** `car run`'s options; `car replay --run` takes the same. */
export const RUN_OPTIONS = {
  tools: { type: "string" },
  policies: { type: "string", multiple: true },
  state: { type: "string" },
  events: { type: "string" },
  report: { type: "string" },
  "max-concurrency": { type: "string" },
  rollback: { type: "string" },
  json: { type: "boolean" },
  db: { type: "string" },
  tier: { type: "string" },
  agent: { type: "string" },
  sandbox: { type: "boolean" },
  "wait-for-approval": { type: "string" },
  strict: { type: "boolean" },
} as const satisfies OptionSpecs;

export type RunOptions = ParsedArgs<typeof RUN_OPTIONS>["options"];

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, RUN_OPTIONS);
  const [path] = expectPositionals(positionals, ["proposal.json"]);
  return runProposalWith(options, () => loadParsedProposal(path!, {}, options.strict === true));
}

/**
 * Runs the proposal `load` answers with `options`: the one path from
 * options to admission and execution, shared by `car run` and
 * `car replay --run`. Options are checked before the proposal is loaded.
 */
export async function runProposalWith(options: RunOptions, load: () => Promise<ParsedProposal>): Promise<number> {
  if (options.tools === undefined) throw usageError("--tools is required (a tools module or a tools.json)");
  const maxConcurrency = options["max-concurrency"] === undefined ? undefined : positiveInteger(options["max-concurrency"], "--max-concurrency");
  const rollback = options.rollback ?? "state";
  if (rollback !== "state" && rollback !== "compensate") throw usageError(`--rollback must be state or compensate, got '${rollback}'`);
  const waitMs = options["wait-for-approval"] === undefined ? undefined : parseDurationMs(options["wait-for-approval"], "--wait-for-approval");
  const tier = options.tier ?? "sandbox_edit";
  if (!isPermissionTier(tier)) throw usageError(`--tier must be read_only, sandbox_edit or full_access, got '${tier}'`);

  // Parsed once: verify and the runtime take the pair as it is, graph included.
  const parsed = await load();
  const { proposal } = parsed;
  const policyDirList = options.policies?.map((d) => resolve(d)) ?? policyDirs(process.cwd(), { carHome: resolveCarHome() });
  const runProposal = async (sandbox: OsSandbox | undefined): Promise<number> => {
    const tools = await loadTools(options.tools!, sandbox);
    const state = options.state === undefined ? {} : await loadJsonObject(options.state, "state file");

    const c = colors(colorEnabled(process.stderr));
    const showProgress = options.json !== true;

    const store = await openRuntimeStore(options.db);
    const runtime = new Runtime({ store, approvalGate: approvalGate(store, tier, options.agent) });
    await runtime.recover();
    try {
      for (const t of tools) runtime.registerTool(t.schema ?? t.name, t.handler);
      let rules = 0;
      for (const dir of policyDirList) rules += runtime.loadPolicies(dir);
      await seedState(runtime, state, options.state);
      // Verified against the state the run will see: the database's, with --state on top. Findings are
      // shown, not enforced here; the static gate's are left to the engine's admission, which reports
      // them once, as the rejections they become; trace rules are enforced by the TraceGate.
      const verified = verify(parsed, { state: runtime.state.snapshot(), gate: false, traceRules: runtime.traceGate.rules() });
      if (showProgress) {
        const paint = { error: c.red, warning: c.yellow, info: c.cyan };
        for (const issue of verified.issues) eprintln(`verify: ${paint[issue.severity](issue.severity)} ${issue.action_id ?? "(proposal)"}: ${issue.message}`);
      } else {
        // --json keeps stdout for the result, but a misspelt field is still said (DECISIONS §25), on stderr.
        for (const f of unknownFields(proposal)) eprintln(`warning: ${f.action_id ?? "(proposal)"}: ${f.pointer}: ${f.message}`);
      }
      if (showProgress)
        eprintln(
          c.dim(`running proposal ${proposal.id}: ${proposal.actions.length} actions, ${tools.length} tools, ${rules} policy rule${rules === 1 ? "" : "s"}`),
        );

      const { result, report, events } = await execute(runtime, parsed, {
        events: options.events,
        progress: showProgress ? progressView(proposal, c) : undefined,
        maxConcurrency,
        rollback,
        waitMs,
        dbOption: options.db,
      });
      if (options.report !== undefined) {
        const { runReportHtml, runTimeline } = await import("@car/server/run-report");
        writeFileSync(options.report, runReportHtml(runTimeline(proposal.id, events, report.outcome)));
        if (showProgress) eprintln(c.dim(`report: ${options.report}`));
      }
      if (options.json) println(JSON.stringify(serializeProposalResult(result), null, 2));
      else println(resultSummary(result, colors(colorEnabled(process.stdout))));
      // DECISIONS §14: skip actions whose tool failed do not fail the run, but they are said.
      const skipped = report.skipped_failures;
      if (skipped.length > 0)
        eprintln(
          c.yellow(
            `warning: ${skipped.length} skip action${skipped.length === 1 ? "" : "s"} failed and ${skipped.length === 1 ? "was" : "were"} skipped: ${skipped.join(", ")}`,
          ),
        );
      const heldAtAdmission = report.gated.filter((g) => g.stage === "admission");
      for (const line of gatedLines(heldAtAdmission, options.db)) eprintln(c.red(line));
      for (const line of resolvedLines(gatedAtDispatch(report.gated), options.db)) eprintln(c.red(line));
      // A commit the store refused (a conflict): say why, with its own code (stale_read / write_conflict).
      if (report.refusal !== undefined) eprintln(c.red(report.refusal.message));
      return report.code === undefined ? 0 : ERROR_CODES[report.code].exit;
    } finally {
      await runtime.close();
    }
  };
  // Started before the tools load (program tools run in it) and stopped however the run ends: its proxies keep the process alive.
  const sandbox = await sandboxForRun(options.sandbox, policyDirList, options.tools, eprintln);
  try {
    return await runProposal(sandbox);
  } finally {
    await sandbox?.close();
  }
}

/**
 * `--state FILE` is the *initial* state: it seeds the database, never
 * rewrites what is already there. Keys the database lacks are written (on the
 * record, as state_changed events); a key it holds with the same value is
 * left alone, so re-running a seeded plan works; a key holding another value
 * refuses the run before anything is written, naming each such key.
 */
async function seedState(runtime: Runtime, state: JsonObject, file: string | undefined): Promise<void> {
  const differing = Object.keys(state).filter((key) => {
    const held = runtime.state.get(key);
    return held !== undefined && !jsonEquals(held, state[key]!);
  });
  if (differing.length > 0) {
    throw new CarError(
      "invalid_params",
      `--state ${file}: the database already holds ${differing.map((k) => `'${k}'`).join(", ")} with other values; --state only seeds initial state, it does not overwrite it (use a fresh --db, or --db :memory:)`,
    );
  }
  for (const key of Object.keys(state)) if (runtime.state.get(key) === undefined) await runtime.state.set(key, state[key]!);
}

/**
 * DECISIONS §16: every run is gated, at the standing tier `sandbox_edit`
 * unless `--tier` says otherwise, on the database's approval ledger (where
 * `car approvals approve` records), refined by the agent's postures.
 */
function approvalGate(store: RuntimeStore, tier: PermissionTier, agent: string | undefined): ApprovalGate {
  if (agent !== undefined && !isAuditedStore(store)) throw usageError("--agent needs a database with agent postures (not --db :memory:)");
  return new ApprovalGate({
    ledger: store.approvals,
    sessionId: "car-run",
    grantedTier: tier,
    ...(agent !== undefined && isAuditedStore(store) ? { posture: postureWithDefault(store.postures, agent) } : {}),
  });
}

/**
 * The resolved forms (and undo steps) refused after admission for want of
 * an approval of their own (DECISIONS §22): `car run` has no one to ask, so
 * the gate answered for nobody (`reviewer: "none"`).
 */
function gatedAtDispatch(gated: readonly GatedAction[]): GatedAction[] {
  return gated.filter((g) => g.stage !== "admission" && g.reviewer === "none");
}

/**
 * The gated actions grouped by operation (fingerprint), in first-seen order: actions with the same
 * tool and parameters are one operation, approved once, so it is named once with all its actions.
 */
function byOperation(gated: readonly GatedAction[]): { first: GatedAction; actions: string[] }[] {
  const groups = new Map<string, { first: GatedAction; actions: string[] }>();
  for (const g of gated) {
    const group = groups.get(g.fingerprint);
    if (group === undefined) groups.set(g.fingerprint, { first: g, actions: [g.action_id] });
    else if (!group.actions.includes(g.action_id)) group.actions.push(g.action_id);
  }
  return [...groups.values()];
}

/** One line per resolved form that needs its own approval, and the command that approves it: once per operation. */
function resolvedLines(gated: readonly GatedAction[], db: string | undefined): string[] {
  const groups = byOperation(gated);
  const lines = groups.map(
    ({ first: g, actions }) =>
      `approval needed: ${actions.join(", ")}'s resolved form fingerprint ${g.fingerprint} requires ${g.required}, granted ${g.granted} (an approval of the template does not cover what it resolves to)`,
  );
  if (db !== ":memory:") for (const { first } of groups) lines.push(approveLine(first, db));
  return lines;
}

/** One line per refused operation (naming its actions), then how to approve what needs approval: once per operation. */
function gatedLines(gated: readonly GatedAction[], db: string | undefined): string[] {
  if (gated.length === 0) return [];
  const groups = byOperation(gated);
  const lines = groups.map(({ first: g, actions }) => {
    const what = g.decision === "deny" ? "approval denied" : "approval needed";
    const reason = g.reason === undefined ? "" : ` (${g.reason})`;
    return `${what}: ${actions.join(", ")} fingerprint ${g.fingerprint} requires ${g.required}, granted ${g.granted}${reason}`;
  });
  lines.push("nothing ran: the whole proposal is rejected until every action is approved");
  if (db === ":memory:") {
    lines.push("  (--db :memory: keeps no approvals: run with a database to approve them)");
    return lines;
  }
  for (const { first } of groups) if (first.decision !== "deny") lines.push(approveLine(first, db));
  return lines;
}

/** `  approve: car approvals approve <fingerprint> [--db …]` for a held action's operation. */
function approveLine(gated: GatedAction, db: string | undefined): string {
  // A postgres:// URL may hold a password: it is not echoed.
  const dbOption = db === undefined ? "" : isPostgresUrl(db) ? " --db <the same postgres:// URL>" : ` --db ${db}`;
  return `  approve: car approvals approve ${gated.fingerprint}${dbOption}`;
}

async function loadTools(file: string, sandbox: OsSandbox | undefined): Promise<LoadedTool[]> {
  if (MODULE_EXTENSIONS.has(extname(file))) return loadToolModule(file);
  return parseProgramTools(await readJson(file, "tools file"), file).map((t) => programTool(t, sandbox));
}

/**
 * The OS sandbox program tools run in: on when a policy asks (`sandbox`),
 * required by `sandbox = "required"` or `--sandbox`, off with `--no-sandbox`
 * (unless a policy requires it). A module's tools run in car's own process,
 * which no sandbox holds: said on stderr, refused when required.
 */
async function sandboxForRun(
  flag: boolean | undefined,
  dirs: readonly string[],
  toolsFile: string,
  warn: (line: string) => void,
): Promise<OsSandbox | undefined> {
  const rules = loadRules(dirs);
  const asked = sandboxMode(rules);
  if (flag === false) {
    if (asked === "required") throw new CarError("policy_denied", '--no-sandbox: a policy requires the sandbox (sandbox = "required")');
    return undefined;
  }
  const mode = flag === true ? "required" : asked;
  if (mode === "off") return undefined;
  if (MODULE_EXTENSIONS.has(extname(toolsFile))) {
    const why = "tools from a module run inside car's own process, which no sandbox holds; only a tools.json's programs run in it";
    if (mode === "required") throw new SandboxUnavailableError(why);
    warn(`car: ${why}`);
    return undefined;
  }
  return openSandbox(mode, sandboxSettingsFor(rules, dirs, process.cwd(), resolveCarHome()), warn);
}

/** Renders one event as a progress line, labelling each action with its tool. */
function progressView(proposal: ActionProposal, c: Colors): (event: CarEvent) => string | undefined {
  const labels = new Map(proposal.actions.map((a) => [a.id, a.tool ?? a.type]));
  const shown = new ShownOnce();
  return (event) => progressLine(event, c, labels, shown);
}

interface ExecuteSetup {
  events: string | undefined;
  progress: ((event: CarEvent) => string | undefined) | undefined;
  maxConcurrency: number | undefined;
  rollback: "state" | "compensate";
  /** `--wait-for-approval`, in ms. */
  waitMs: number | undefined;
  dbOption: string | undefined;
}

/** Approvals the run waits for, each announced on stderr with the command that decides it. */
function approvalWaitFor(setup: ExecuteSetup): ApprovalWait | undefined {
  if (setup.waitMs === undefined) return undefined;
  const db = setup.dbOption === undefined ? "" : ` --db ${setup.dbOption}`;
  const waits = new ApprovalWaits({
    requested: (w) =>
      eprintln(
        `waiting for approval: ${w.action_id} (${w.tool ?? "-"}) fingerprint ${w.fingerprint} requires ${w.required}, granted ${w.granted}; until ${new Date(w.deadline).toISOString()}\n  approve: car approvals approve ${w.fingerprint}${db}\n  reject:  car approvals reject ${w.fingerprint}${db}`,
      ),
    resolved: (w, decision, reviewer) => eprintln(`approval for ${w.action_id}: ${decision} (${reviewer})`),
  });
  return { waits, timeoutMs: setup.waitMs, asked_by: "car run" };
}

/**
 * Executes while following the runtime's event feed: each event goes to the
 * JSON-lines file and to the progress view as it happens. Ctrl-C aborts the
 * proposal (rolled back like any abort; running tools are told to stop).
 */
async function execute(runtime: Runtime, parsed: ParsedProposal, setup: ExecuteSetup): Promise<ProposalOutcome & { events: CarEvent[] }> {
  const { proposal } = parsed;
  const sink: WriteStream | undefined = setup.events === undefined ? undefined : createWriteStream(setup.events, { flags: "a" });
  const feed = runtime.events.subscribe();
  const mine: CarEvent[] = [];
  const follow = (async () => {
    for await (const event of feed) {
      if (event.proposal_id === proposal.id) mine.push(event);
      const line = setup.progress?.(event);
      if (line !== undefined) eprintln(line);
      if (event.proposal_id !== proposal.id) continue;
      if (event.kind === "compensation_completed") break;
      // With compensation, a rollback is followed by the compensation phase: follow it to its end.
      if (event.kind === "proposal_completed" && !(setup.rollback === "compensate" && event.data["outcome"] === "rolled_back")) break;
    }
  })();
  const cancel = new AbortController();
  const onSigint = () => cancel.abort(new Error("interrupted (SIGINT)"));
  process.once("SIGINT", onSigint);
  try {
    const approvalWait = approvalWaitFor(setup);
    const { result, report } = await runtime.executeProposalWithReport(parsed, undefined, {
      signal: cancel.signal,
      rollback: setup.rollback,
      ...(approvalWait !== undefined ? { approvalWait } : {}),
      ...(setup.maxConcurrency !== undefined ? { maxConcurrency: setup.maxConcurrency } : {}),
    });
    await follow;
    // The file holds exactly what the durable log holds for the proposal — the live feed may show
    // events a refused commit took back, and it ends at the first completion.
    if (sink !== undefined) {
      const logged = runtime.events.query({ proposal_id: proposal.id });
      // This run's events start at its `proposal_received` (an earlier run may have used the same id).
      const from = logged.findLastIndex((e) => e.kind === "proposal_received");
      for (const event of logged.slice(Math.max(from, 0))) sink.write(`${JSON.stringify(event)}\n`);
    }
    return { result, report, events: mine };
  } finally {
    process.off("SIGINT", onSigint);
    await feed.return?.();
    if (sink !== undefined) await new Promise<void>((done, fail) => sink.end((err?: Error | null) => (err ? fail(err) : done())));
  }
}
