/**
 * The change history of a store that keeps it in memory (the in-memory
 * store, the PostgreSQL store's per-runtime cache): every change is recorded
 * with who made it and when, oldest first.
 */
import { rfc3339 } from "@car/ir";
import type { Clock, StateMutation } from "@car/ir";
import type { ChangeAttribution, StateTransition, TransitionQuery } from "./state-store.ts";

export class TransitionLog {
  readonly #transitions: StateTransition[] = [];
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Records the change that took `key` to `version` (from `version - 1`), stamped now. */
  record(key: string, mutation: StateMutation, version: number, by: ChangeAttribution): StateTransition {
    const transition: StateTransition = {
      key,
      mutation,
      previous_version: version - 1,
      version,
      proposal_id: by.proposal_id,
      action_id: by.action_id,
      timestamp: rfc3339(this.#clock.now()),
    };
    this.#transitions.push(transition);
    return transition;
  }

  select(query: TransitionQuery): StateTransition[] {
    return this.#transitions.filter(
      (t) =>
        (query.key === undefined || t.key === query.key) &&
        (query.proposal_id === undefined || t.proposal_id === query.proposal_id) &&
        (query.action_id === undefined || t.action_id === query.action_id),
    );
  }
}
