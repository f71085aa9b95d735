/** The `transitions(query)` filter for stores that keep their transitions in memory. */
import type { StateTransition, TransitionQuery } from "./state-store.ts";

export function selectTransitions(transitions: readonly StateTransition[], query: TransitionQuery): StateTransition[] {
  return transitions.filter(
    (t) =>
      (query.key === undefined || t.key === query.key) &&
      (query.proposal_id === undefined || t.proposal_id === query.proposal_id) &&
      (query.action_id === undefined || t.action_id === query.action_id),
  );
}
