/**
 * An approver's answer is a closed vocabulary (DECISIONS §16): the gate's
 * own verbs (`approve`, `reject`, `deny`) and the ledger's past tenses
 * (`approved`, `rejected`, `denied`). Anything else is not a decision — the
 * approver made a mistake, and recording it as a refusal would put a false
 * entry ("alice rejected") on the audit record — so it is an error returned
 * to the approver and nothing is recorded.
 */
import { CarError } from "@car/ir";
import type { ApprovalOutcome } from "./approval-ledger.ts";

export const APPROVE_WORDS = ["approve", "approved"] as const;
export const REJECT_WORDS = ["reject", "rejected", "deny", "denied"] as const;

export type ApprovalWord = (typeof APPROVE_WORDS)[number] | (typeof REJECT_WORDS)[number];

const OUTCOMES: ReadonlyMap<string, ApprovalOutcome> = new Map<string, ApprovalOutcome>([
  ...APPROVE_WORDS.map((w) => [w, "approved"] as const),
  ...REJECT_WORDS.map((w) => [w, "rejected"] as const),
]);

/** The ledger outcome an approver's word stands for; `invalid_params` for a word outside the vocabulary. */
export function approvalOutcome(word: unknown): ApprovalOutcome {
  const outcome = typeof word === "string" ? OUTCOMES.get(word) : undefined;
  if (outcome !== undefined) return outcome;
  const shown = typeof word === "string" ? `'${word}'` : `a ${word === null ? "null" : typeof word}`;
  throw new CarError("invalid_params", `an approval answer must be one of ${[...APPROVE_WORDS, ...REJECT_WORDS].join(", ")}; got ${shown}`, {
    answer: typeof word === "string" ? word : null,
  });
}
