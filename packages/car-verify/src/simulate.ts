/**
 * `simulate`: the state a proposal leaves behind, predicted from declared
 * effects without running anything. Unlike verify's walk, an action that
 * cannot run (failed precondition, missing state dependency) lands nothing,
 * and its dependants drop out along data dependencies — the car#622 rule.
 */
import type { ActionProposal, DependencyGraph, JsonObject } from "@car/ir";
import { dependencyEdges } from "@car/ir";
import type { VerifyInput } from "./input.ts";
import { toParsed } from "./input.ts";
import type { StateInput } from "./state.ts";
import { stateMap, stateRecord } from "./state.ts";
import { dataPredecessors, flatEffects, type SimulatedWalk, simulatedWalk } from "./walk.ts";

export interface SimulationOutcome {
  /** The post-state. */
  readonly state: JsonObject;
  /** Ids of actions whose effects did not land, in declaration order. */
  readonly skipped: string[];
}

/** The simulated walk of one proposal from any start state, on one graph and its data predecessors, computed once. */
function walker(proposal: ActionProposal, graph: DependencyGraph = dependencyEdges(proposal.actions)): (state?: StateInput) => SimulatedWalk {
  const dataPreds = dataPredecessors(proposal.actions, graph);
  const effects = flatEffects(proposal.actions);
  return (state) => simulatedWalk(proposal.actions, graph, stateMap(state), dataPreds, effects);
}

/**
 * Simulates one parsed proposal from any number of starting states on one
 * graph (built here unless parsing already did). Throws `invalid_proposal`
 * when the graph cannot be built.
 */
export function simulator(proposal: ActionProposal, graph?: DependencyGraph): (state?: StateInput) => SimulationOutcome {
  const walk = walker(proposal, graph);
  return (state) => {
    const result = walk(state);
    const skipped: string[] = [];
    result.skipped.forEach((flag, i) => {
      if (flag === 1) skipped.push(proposal.actions[i]!.id);
    });
    return { state: stateRecord(result.simulated), skipped };
  };
}

/** The post-state plus which actions were skipped. Throws `invalid_proposal` for a proposal whose graph cannot be built. */
export function simulateDetailed(input: VerifyInput, state?: StateInput): SimulationOutcome {
  const { proposal, graph } = toParsed(input);
  return simulator(proposal, graph)(state);
}

/**
 * The state the proposal leaves behind, starting from `state` (default `{}`).
 * The same walk as `simulateDetailed`, without listing the skipped actions'
 * ids (a conflict-heavy 1M-action plan skips every one).
 */
export function simulate(input: VerifyInput, state?: StateInput): JsonObject {
  const { proposal, graph } = toParsed(input);
  return stateRecord(walker(proposal, graph)(state).simulated);
}
