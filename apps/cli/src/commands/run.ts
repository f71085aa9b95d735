/**
 * `car run`: verify a proposal, load its tools and the project's policies,
 * execute it on @car/engine with live progress, and print the
 * ProposalResult. The exit code says how it went (0 all clear, 1 something
 * failed or was refused, 2 bad usage or input).
 */
import { createWriteStream, writeFileSync, type WriteStream } from "node:fs";
import { extname, resolve } from "node:path";
import { type ActionProposal, type CarErrorCode, ERROR_CODES, type ParsedProposal, type ProposalResult, serializeProposalResult } from "@car/ir";
import { type CarEvent, Runtime } from "@car/engine";
import { policyDirs } from "@car/policy/gate";
import { verify } from "@car/verify";
import { expectPositionals, parseArgs, positiveInteger, usageError } from "../argv.ts";
import { resolveCarHome } from "../car-home.ts";
import { openRuntimeStore } from "../car-database.ts";
import { loadJsonObject, loadParsedProposal, MODULE_EXTENSIONS } from "../inputs.ts";
import { eprintln, println, readJson } from "../io.ts";
import { type Colors, colorEnabled, colors } from "../render/color.ts";
import { progressLine, resultSummary } from "../render/run-progress.ts";
import type { LoadedTool } from "../tools/loaded-tool.ts";
import { loadToolModule } from "../tools/module-tools.ts";
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
  --state <FILE>          Initial state (a JSON object)
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
  --json                  Print the ProposalResult as JSON on stdout, no progress

Exit status: 0 every action succeeded (or was skipped by its own choice: a
warning line names the skip actions whose tool failed), 1 an action failed,
was rejected or the run was cancelled, or the store refused the commit for a
conflict (a stderr line starting "commit refused:" names the keys; error
code stale_read / write_conflict), 2 bad usage or input.`;

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, {
    tools: { type: "string" },
    policies: { type: "string", multiple: true },
    state: { type: "string" },
    events: { type: "string" },
    report: { type: "string" },
    "max-concurrency": { type: "string" },
    rollback: { type: "string" },
    json: { type: "boolean" },
    db: { type: "string" },
  });
  const [path] = expectPositionals(positionals, ["proposal.json"]);
  if (options.tools === undefined) throw usageError("--tools is required (a tools module or a tools.json)");
  const maxConcurrency = options["max-concurrency"] === undefined ? undefined : positiveInteger(options["max-concurrency"], "--max-concurrency");
  const rollback = options.rollback ?? "state";
  if (rollback !== "state" && rollback !== "compensate") throw usageError(`--rollback must be state or compensate, got '${rollback}'`);

  // Parsed once: verify and the runtime take the pair as it is, graph included.
  const parsed = await loadParsedProposal(path!);
  const { proposal } = parsed;
  const tools = await loadTools(options.tools);
  const state = options.state === undefined ? {} : await loadJsonObject(options.state, "state file");
  const policyDirList = options.policies?.map((d) => resolve(d)) ?? policyDirs(process.cwd(), { carHome: resolveCarHome() });

  const c = colors(colorEnabled(process.stderr));
  const showProgress = options.json !== true;

  const runtime = new Runtime({ store: await openRuntimeStore(options.db) });
  await runtime.recover();
  try {
    for (const t of tools) runtime.registerTool(t.schema ?? t.name, t.handler);
    let rules = 0;
    for (const dir of policyDirList) rules += runtime.loadPolicies(dir);
    for (const key of Object.keys(state)) await runtime.state.set(key, state[key]!);
    // Verified against the state the run will see: the database's, with --state on top. Findings are
    // shown, not enforced here; the static gate's are left to the engine's admission, which reports
    // them once, as the rejections they become; trace rules are enforced by the TraceGate.
    const report = verify(parsed, { state: runtime.state.snapshot(), gate: false, traceRules: runtime.traceGate.rules() });
    if (showProgress) {
      const paint = { error: c.red, warning: c.yellow, info: c.cyan };
      for (const issue of report.issues) eprintln(`verify: ${paint[issue.severity](issue.severity)} ${issue.action_id ?? "(proposal)"}: ${issue.message}`);
    }
    if (showProgress)
      eprintln(
        c.dim(`running proposal ${proposal.id}: ${proposal.actions.length} actions, ${tools.length} tools, ${rules} policy rule${rules === 1 ? "" : "s"}`),
      );

    const { result, events } = await execute(runtime, parsed, {
      events: options.events,
      progress: showProgress ? progressView(proposal, c) : undefined,
      maxConcurrency,
      rollback,
    });
    if (options.report !== undefined) {
      const { runReportHtml, runTimeline } = await import("../render/run-report-html.ts");
      writeFileSync(options.report, runReportHtml(runTimeline(proposal.id, events)));
      if (showProgress) eprintln(c.dim(`report: ${options.report}`));
    }
    if (options.json) println(JSON.stringify(serializeProposalResult(result), null, 2));
    else println(resultSummary(result, colors(colorEnabled(process.stdout))));
    // DECISIONS §14: skip actions whose tool failed do not fail the run, but they are said.
    const skippedFailures = proposal.actions.filter(
      (a, i) => a.failure_behavior === "skip" && result.results[i]!.status === "skipped" && !result.results[i]!.error!.startsWith("not run"),
    );
    if (skippedFailures.length > 0)
      eprintln(
        c.yellow(
          `warning: ${skippedFailures.length} skip action${skippedFailures.length === 1 ? "" : "s"} failed and ${skippedFailures.length === 1 ? "was" : "were"} skipped: ${skippedFailures.map((a) => a.id).join(", ")}`,
        ),
      );
    // A commit the store refused (a conflict): say why, with its own code (stale_read / write_conflict).
    const refusal = runtime.events.query({ proposal_id: proposal.id, kinds: ["commit_refused"] }).at(-1);
    if (refusal !== undefined) eprintln(c.red(`${String(refusal.data["reason"])} — every change was rolled back (${String(refusal.data["code"])})`));
    const code = refusal !== undefined ? (refusal.data["code"] as CarErrorCode) : outcome(result);
    return code === undefined ? 0 : ERROR_CODES[code].exit;
  } finally {
    await runtime.close();
  }
}

async function loadTools(file: string): Promise<LoadedTool[]> {
  if (MODULE_EXTENSIONS.has(extname(file))) return loadToolModule(file);
  return parseProgramTools(await readJson(file, "tools file"), file).map(programTool);
}

/** Renders one event as a progress line, labelling each action with its tool. */
function progressView(proposal: ActionProposal, c: Colors): (event: CarEvent) => string | undefined {
  const labels = new Map(proposal.actions.map((a) => [a.id, a.tool ?? a.type]));
  return (event) => progressLine(event, c, labels);
}

interface ExecuteSetup {
  events: string | undefined;
  progress: ((event: CarEvent) => string | undefined) | undefined;
  maxConcurrency: number | undefined;
  rollback: "state" | "compensate";
}

/**
 * Executes while following the runtime's event feed: each event goes to the
 * JSON-lines file and to the progress view as it happens. Ctrl-C aborts the
 * proposal (rolled back like any abort; running tools are told to stop).
 */
async function execute(runtime: Runtime, parsed: ParsedProposal, setup: ExecuteSetup): Promise<{ result: ProposalResult; events: CarEvent[] }> {
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
    const result = await runtime.executeProposal(parsed, undefined, {
      signal: cancel.signal,
      rollback: setup.rollback,
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
    return { result, events: mine };
  } finally {
    process.off("SIGINT", onSigint);
    await feed.return?.();
    if (sink !== undefined) await new Promise<void>((done, fail) => sink.end((err?: Error | null) => (err ? fail(err) : done())));
  }
}

/** The error code that describes the run, or `undefined` when it went cleanly. */
function outcome(result: ProposalResult): CarErrorCode | undefined {
  if (result.results.some((r) => r.terminal === true)) return "terminal_failure";
  if (result.results.some((r) => r.status === "failed")) return "tool_error";
  if (result.results.some((r) => r.status === "rejected"))
    return result.results.some((r) => r.error?.includes("denied by policy")) ? "policy_denied" : "verification_failed";
  if (result.results.some((r) => r.rolled_back === true)) return "cancelled";
  return undefined;
}
