/**
 * `car verify`: static verification of a proposal, as a report for a person,
 * as JSON for a program, or as a drawing of the plan (DOT or self-contained
 * HTML). Exit 0 when valid, 1 when invalid, 2 for bad usage or input.
 */
import { resolve } from "node:path";
import { loadPolicyDir } from "@car/policy";
import { ERROR_CODES, type ProposalLimits, type VerificationResult } from "@car/ir";
import { simulateDetailed, verify } from "@car/verify";
import { expectPositionals, parseArgs, positiveInteger, usageError } from "@car/server/argv";
import { loadJsonObject, loadParsedProposal, loadToolSpecs } from "../inputs.ts";
import { colorEnabled, colors } from "../render/color.ts";
import { writeJson } from "../render/json-stream.ts";
import { planDotLines } from "../render/plan-dot.ts";
import { planHtml } from "../render/plan-html.ts";
import { planModel } from "../render/plan-model.ts";
import { openSink, writeLines } from "../render/sink.ts";
import { verifyReportLines } from "../render/verify-report.ts";

/** Most actions the HTML drawing shows; a picture of more is unreadable. */
export const HTML_MAX_NODES = 1000;

export const usage = `Usage: car verify [options] <proposal.json | ->

Statically verifies a proposal: dependencies, preconditions against the
state, state dependencies, write conflicts, repeated calls, tools and their
parameter schemas, the action budget, compensations and the rollback
contract. No tool runs; policies are read only for their trace rules, which
are checked against every order the plan permits.

Options:
  --state <FILE>        Initial state (a JSON object)
  --tools <FILE|NAMES>  Tool registry: a tools module (.mjs), a tools.json, a JSON
                        array of names / ToolSchemas (in a file or inline), or
                        comma-separated names
  --max-actions <N>     More actions than N is an error (a finding in the report)
  --strict              A field the spec does not name (a typo such as
                        'dependecies') is an error, exit 2; without it each is a
                        warning with a did-you-mean, and the field is kept as is
  --policies <DIR>      Check the trace rules of this policy directory (repeatable;
                        a malformed policy file is an error naming it)
  --max-proposal-actions <N>
                        Refuse a proposal of more than N actions before any work
                        (default 2000000)
  --max-proposal-bytes <N>
                        Refuse proposal text longer than N bytes before reading it
                        (default 500000000)
  --format <FMT>        text (default), json, dot or html
  --json                Same as --format json
  -o, --output <FILE>   Write the report there instead of stdout

Large proposals: the text report samples long lists (levels, conflicts per
key, state keys) and the HTML drawing shows the first ${HTML_MAX_NODES} actions; --json
and dot carry everything. Every format is written as it is produced.

Exit status: 0 valid, 1 invalid, 2 bad usage or unreadable input.`;

const FORMATS = new Set(["text", "json", "dot", "html"]);

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, {
    state: { type: "string" },
    tools: { type: "string" },
    "max-actions": { type: "string" },
    strict: { type: "boolean" },
    policies: { type: "string", multiple: true },
    "max-proposal-actions": { type: "string" },
    "max-proposal-bytes": { type: "string" },
    format: { type: "string" },
    json: { type: "boolean" },
    output: { type: "string", short: "o" },
  });
  const [path] = expectPositionals(positionals, ["proposal.json"]);
  const format = options.json ? "json" : (options.format ?? "text");
  if (!FORMATS.has(format)) throw usageError(`--format must be text, json, dot or html, got '${format}'`);
  if (options.json && options.format !== undefined && options.format !== "json") throw usageError("--json conflicts with --format");
  const maxActions = options["max-actions"] === undefined ? undefined : positiveInteger(options["max-actions"], "--max-actions");

  const limits: ProposalLimits = {};
  if (options["max-proposal-actions"] !== undefined) limits.maxActions = positiveInteger(options["max-proposal-actions"], "--max-proposal-actions");
  if (options["max-proposal-bytes"] !== undefined) limits.maxBytes = positiveInteger(options["max-proposal-bytes"], "--max-proposal-bytes");

  // The graph parsing built goes to verify (and simulate) with the proposal, so neither builds it again.
  const parsed = await loadParsedProposal(path!, limits, options.strict === true);
  const proposal = parsed.proposal;
  const state = options.state === undefined ? undefined : await loadJsonObject(options.state, "state file");
  const tools = options.tools === undefined ? undefined : await loadToolSpecs(options.tools);
  const traceRules = (options.policies ?? []).flatMap((dir) => loadPolicyDir(resolve(dir)).trace_rule);
  const result: VerificationResult = verify(parsed, {
    ...(state !== undefined ? { state } : {}),
    ...(tools !== undefined ? { tools } : {}),
    ...(maxActions !== undefined ? { maxActions } : {}),
    ...(traceRules.length > 0 ? { traceRules } : {}),
  });

  const sink = openSink(options.output);
  try {
    if (format === "json") {
      writeJson(sink, result);
      sink.write("\n");
    } else if (format === "dot") {
      writeLines(sink, planDotLines(planModel(proposal, result)));
    } else if (format === "html") {
      // Blocked = what simulation skips from this state: its preconditions or state dependencies cannot hold.
      const blocked = new Set(simulateDetailed(parsed, state).skipped);
      const model = planModel(proposal, result, { maxNodes: HTML_MAX_NODES, blocked });
      sink.write(planHtml(model, model.omitted === 0 ? { simulatedState: result.simulated_state } : {}));
    } else {
      const c = colors(options.output === undefined && colorEnabled(process.stdout));
      writeLines(sink, verifyReportLines(proposal.id, proposal.actions.length, result, c));
    }
  } finally {
    sink.close();
  }
  return result.valid ? 0 : ERROR_CODES.verification_failed.exit;
}
