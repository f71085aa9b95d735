/**
 * `car optimize`: the proposal with phantom `state_dependencies` removed (a
 * dependency on a key no earlier action writes orders nothing), printed as
 * JSON. Nothing is reordered or removed; re-run `car verify` on the result.
 */
import { serializeProposal } from "@car/ir";
import { optimize } from "@car/verify";
import { expectPositionals, parseArgs } from "@car/server/argv";
import { loadProposal } from "../inputs.ts";
import { println } from "../io.ts";

export const usage = `Usage: car optimize <proposal.json | ->

Prints the optimized proposal (JSON): phantom state dependencies become
'exists' preconditions so independent actions share a level.`;

export async function main(args: string[]): Promise<number> {
  const { positionals } = parseArgs(args, {});
  const [path] = expectPositionals(positionals, ["proposal.json"]);
  const proposal = await loadProposal(path!);
  println(JSON.stringify(serializeProposal(optimize(proposal)), null, 2));
  return 0;
}
