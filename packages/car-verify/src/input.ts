/**
 * Every function here takes a proposal the way callers have it: a parsed
 * `ActionProposal`, JSON text, or JSON data straight off the wire. Anything
 * that is not already in parsed shape goes through `parseProposal`, so
 * defaults are applied and a malformed proposal is a thrown
 * `invalid_proposal`, never a crash halfway through a check.
 */
import type { ActionProposal, DependencyGraph, ParsedProposal } from "@car/ir";
import { isJsonObject, isParsedProposal, parseProposalWithGraph } from "@car/ir";

/**
 * A proposal in any form @car/verify accepts: parsed, a pair from
 * `parseProposalWithGraph`, JSON text, or unparsed JSON data. (`@car/ir`'s
 * `ProposalInput` is narrower: what a producer writes, typed.)
 */
export type VerifyInput = ActionProposal | ParsedProposal | string | unknown;

const ARRAY_FIELDS = ["preconditions", "dependencies", "state_dependencies", "read_set", "write_set", "assumptions"] as const;
const MAP_FIELDS = ["parameters", "expected_effects", "metadata"] as const;

/**
 * Whether `value` already has every field the checks read, with defaults
 * applied — a cheap structural test, so a proposal parsed once is not parsed
 * again on every call.
 */
function isParsed(value: unknown): value is ActionProposal {
  if (!isJsonObject(value) || typeof value["id"] !== "string" || !Array.isArray(value["actions"])) return false;
  for (const action of value["actions"]) {
    if (!isJsonObject(action) || typeof action["id"] !== "string" || typeof action["type"] !== "string") return false;
    for (const f of ARRAY_FIELDS) if (!Array.isArray(action[f])) return false;
    for (const f of MAP_FIELDS) if (!isJsonObject(action[f])) return false;
  }
  return true;
}

/**
 * `input` as a parsed proposal, plus its graph when parsing built one (a
 * pair from `parseProposalWithGraph` comes with its own; a bare parsed
 * proposal comes without: its graph may not build).
 * Throws `CarError("invalid_proposal")` when the input does not parse.
 */
export function toParsed(input: VerifyInput): { proposal: ActionProposal; graph?: DependencyGraph } {
  if (isParsedProposal(input)) return input;
  return isParsed(input) ? { proposal: input } : parseProposalWithGraph(input);
}

/** `input` as a parsed proposal; throws `CarError("invalid_proposal")` when it is not one. */
export function toProposal(input: VerifyInput): ActionProposal {
  return toParsed(input).proposal;
}
