/**
 * Ranking candidate proposals by their CostTarget score: the best first, ties
 * kept in the order the candidates came in, so the ranking is deterministic.
 * A candidate that does not parse is kept, last, with its error — a planner
 * wants to tell the model what was wrong with it.
 */
import { CarError, isCarError, parseProposalWithGraph } from "@car/ir";
import type { ParsedProposal } from "@car/ir";
import type { ProposalScore, ScoreOptions } from "./score.ts";
import { isParsed, scoreProposal } from "./score.ts";

export interface RankedProposal {
  /** Position in the input list. */
  index: number;
  /** The parsed candidate and its score; absent when it did not parse. */
  proposal?: ParsedProposal;
  score?: ProposalScore;
  error?: CarError;
}

/** Scores every candidate with the same options (`verification` is ignored: each candidate is verified on its own). */
export function rankProposals(candidates: readonly unknown[], options: Omit<ScoreOptions, "verification"> = {}): RankedProposal[] {
  if (!Array.isArray(candidates)) throw new CarError("invalid_params", "rankProposals takes an array of candidate proposals");
  const shared: ScoreOptions = {};
  if (options.target !== undefined) shared.target = options.target;
  if (options.history !== undefined) shared.history = options.history;
  if (options.verifyOptions !== undefined) shared.verifyOptions = options.verifyOptions;
  const ranked: RankedProposal[] = candidates.map((candidate, index) => {
    try {
      const proposal = isParsed(candidate) ? candidate : parseProposalWithGraph(candidate);
      return { index, proposal, score: scoreProposal(proposal, shared) };
    } catch (error) {
      if (isCarError(error, "invalid_params")) throw error;
      return { index, error: isCarError(error) ? error : new CarError("invalid_proposal", String(error)) };
    }
  });
  return ranked.sort((a, b) => (b.score?.score ?? -1) - (a.score?.score ?? -1) || a.index - b.index);
}
