/**
 * `car simulate`: the state the plan would leave behind, from declared
 * `expected_effects` only. An action whose preconditions or state
 * dependencies cannot hold is skipped, as the executor would reject it.
 */
import { simulate } from "@car/verify";
import { expectPositionals, parseArgs } from "@car/server/argv";
import { loadJsonObject, loadParsedProposal } from "../inputs.ts";
import { println } from "../io.ts";

export const usage = `Usage: car simulate [--state FILE] <proposal.json | ->

Prints the state (JSON) the proposal would leave behind, applying only the
effects it declares; no tool runs.

Options:
  --state <FILE>  Initial state (a JSON object)`;

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { state: { type: "string" } });
  const [path] = expectPositionals(positionals, ["proposal.json"]);
  const proposal = await loadParsedProposal(path!); // with its graph: simulate does not build it again
  const state = options.state === undefined ? {} : await loadJsonObject(options.state, "state file");
  println(JSON.stringify(simulate(proposal, state), null, 2));
  return 0;
}
