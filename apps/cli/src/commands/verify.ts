/**
 * `car verify`: static verification of a proposal, as a report for a person,
 * as JSON for a program, or as a drawing of the plan (DOT or self-contained
 * HTML). Exit 0 when valid, 1 when invalid, 2 for bad usage or input.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadPolicyDir } from "@car/policy";
import { ERROR_CODES, type VerificationResult } from "@car/ir";
import { verify } from "@car/verify";
import { expectPositionals, parseArgs, positiveInteger, usageError } from "../argv.ts";
import { loadJsonObject, loadProposal, loadToolSpecs } from "../inputs.ts";
import { println } from "../io.ts";
import { colorEnabled, colors } from "../render/color.ts";
import { planDot } from "../render/plan-dot.ts";
import { planHtml } from "../render/plan-html.ts";
import { planModel } from "../render/plan-model.ts";
import { verifyReport } from "../render/verify-report.ts";

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
  --max-actions <N>     More actions than N is an error
  --policies <DIR>      Check the trace rules of this policy directory (repeatable;
                        a malformed policy file is an error naming it)
  --format <FMT>        text (default), json, dot or html
  --json                Same as --format json
  -o, --output <FILE>   Write the report there instead of stdout

Exit status: 0 valid, 1 invalid, 2 bad usage or unreadable input.`;

const FORMATS = new Set(["text", "json", "dot", "html"]);

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, {
    state: { type: "string" },
    tools: { type: "string" },
    "max-actions": { type: "string" },
    policies: { type: "string", multiple: true },
    format: { type: "string" },
    json: { type: "boolean" },
    output: { type: "string", short: "o" },
  });
  const [path] = expectPositionals(positionals, ["proposal.json"]);
  const format = options.json ? "json" : (options.format ?? "text");
  if (!FORMATS.has(format)) throw usageError(`--format must be text, json, dot or html, got '${format}'`);
  if (options.json && options.format !== undefined && options.format !== "json") throw usageError("--json conflicts with --format");
  const maxActions = options["max-actions"] === undefined ? undefined : positiveInteger(options["max-actions"], "--max-actions");

  const proposal = await loadProposal(path!);
  const state = options.state === undefined ? undefined : await loadJsonObject(options.state, "state file");
  const tools = options.tools === undefined ? undefined : await loadToolSpecs(options.tools);
  const traceRules = (options.policies ?? []).flatMap((dir) => loadPolicyDir(resolve(dir)).trace_rule);
  const result: VerificationResult = verify(proposal, {
    ...(state !== undefined ? { state } : {}),
    ...(tools !== undefined ? { tools } : {}),
    ...(maxActions !== undefined ? { maxActions } : {}),
    ...(traceRules.length > 0 ? { traceRules } : {}),
  });

  let text: string;
  if (format === "json") text = JSON.stringify(result, null, 2);
  else if (format === "dot") text = planDot(planModel(proposal, result));
  else if (format === "html") text = planHtml(planModel(proposal, result), { simulatedState: result.simulated_state });
  else {
    const stream = process.stdout;
    text = verifyReport(proposal.id, proposal.actions.length, result, colors(options.output === undefined && colorEnabled(stream)));
  }
  if (options.output !== undefined) writeFileSync(options.output, text.endsWith("\n") ? text : `${text}\n`);
  else println(text.endsWith("\n") ? text.slice(0, -1) : text);
  return result.valid ? 0 : ERROR_CODES.verification_failed.exit;
}
