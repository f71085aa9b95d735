/**
 * Every function here takes a proposal the way callers have it: a parsed
 * `ActionProposal`, JSON text, or JSON data straight off the wire. Anything
 * that is not already in parsed shape goes through `parseProposal`, so
 * defaults are applied and a malformed proposal is a thrown
 * `invalid_proposal`, never a crash halfway through a check.
 */
import type { ActionProposal, DependencyGraph, ParsedProposal } from "@car/ir";
import { isParsedProposal, isParsedShape, parseProposalWithGraph } from "@car/ir";

/**
 * A proposal in any form @car/verify accepts: parsed, a pair from
 * `parseProposalWithGraph`, JSON text, or unparsed JSON data. (`@car/ir`'s
 * `ProposalInput` is narrower: what a producer writes, typed.)
 */
export type VerifyInput = ActionProposal | ParsedProposal | string | unknown;

/**
 * `input` as a parsed proposal, plus its graph when parsing built one (a
 * pair from `parseProposalWithGraph` comes with its own; a bare parsed
 * proposal comes without: its graph may not build).
 * Throws `CarError("invalid_proposal")` when the input does not parse.
 */
export function toParsed(input: VerifyInput): { proposal: ActionProposal; graph?: DependencyGraph } {
  if (isParsedProposal(input)) return input;
  // The one structural guard: a JSON copy of a parsed proposal is used as it is; anything else, an edited copy with a `null` in
  // an array among it, is parsed, so it is an `invalid_proposal` here and never a `TypeError` inside a check.
  return isParsedShape(input) ? { proposal: input } : parseProposalWithGraph(input);
}

/** `input` as a parsed proposal; throws `CarError("invalid_proposal")` when it is not one. */
export function toProposal(input: VerifyInput): ActionProposal {
  return toParsed(input).proposal;
}
