/**
 * How large a proposal may be. Checked before any work that grows with the
 * proposal, so an oversized one is a clear `invalid_proposal` naming the
 * limit that refused it, never an out-of-memory crash halfway through.
 */
import { CarError } from "./errors.ts";

export interface ProposalLimits {
  /** Most actions a proposal may hold. */
  maxActions?: number;
  /** Most characters of proposal JSON text (one per byte for ASCII text). */
  maxBytes?: number;
}

/**
 * Defaults sized so a proposal at the limit still verifies in a few GB: the
 * scaling goals are met up to a million actions, and V8 cannot hold a string
 * much longer than 512 MiB anyway.
 */
export const DEFAULT_PROPOSAL_LIMITS: Readonly<Required<ProposalLimits>> = { maxActions: 2_000_000, maxBytes: 500_000_000 };

function refuse(what: string, size: number, limit: number, name: string): CarError {
  const message = `proposal ${what} ${size}${name === "max_proposal_actions" ? " actions" : " characters"}, over the limit of ${limit} (${name})`;
  return new CarError("invalid_proposal", message, { problems: [{ pointer: name === "max_proposal_actions" ? "/actions" : "", message }] });
}

/** Throws `invalid_proposal` when JSON text of `length` characters is over the limit. */
export function checkProposalBytes(length: number, limits: ProposalLimits = {}): void {
  const limit = limits.maxBytes ?? DEFAULT_PROPOSAL_LIMITS.maxBytes;
  if (length > limit) throw refuse("text is", length, limit, "max_proposal_bytes");
}

/** Throws `invalid_proposal` when `count` actions are over the limit. */
export function checkProposalActions(count: number, limits: ProposalLimits = {}): void {
  const limit = limits.maxActions ?? DEFAULT_PROPOSAL_LIMITS.maxActions;
  if (count > limit) throw refuse("has", count, limit, "max_proposal_actions");
}
