/**
 * `optimize`: removes phantom `state_dependencies` — a dependency on a key no
 * earlier-declared action writes, which orders nothing (DECISIONS.md §1: a
 * state dependency only ever waits for an earlier writer).
 *
 * A phantom still gates: the action cannot run unless the key is already in
 * state. So the dependency becomes an `exists` precondition on the key, which
 * gates identically at the same point of the walk, and the key stays in the
 * action's `read_set` so the transactional footprint does not shrink. The
 * result simulates exactly like the input on every starting state.
 *
 * It never reorders or removes actions. A phantom adds no edge, so the
 * execution levels are the input's (never deeper).
 */
import type { ActionProposal, JsonValue, Precondition } from "@car/ir";
import { cloneJson, effectiveWriteSet } from "@car/ir";
import type { VerifyInput } from "./input.ts";
import { toProposal } from "./input.ts";

function hasExistsGate(preconditions: readonly Precondition[], key: string): boolean {
  return preconditions.some((p) => p.key === key && p.operator === "exists");
}

/** A new proposal with phantom state dependencies turned into `exists` preconditions. */
export function optimize(input: VerifyInput): ActionProposal {
  const proposal = cloneJson(toProposal(input) as unknown as JsonValue) as unknown as ActionProposal;
  const written = new Set<string>();
  for (const action of proposal.actions) {
    const phantoms = action.state_dependencies.filter((key) => !written.has(key));
    if (phantoms.length > 0) {
      action.state_dependencies = action.state_dependencies.filter((key) => written.has(key));
      // Parsed lists are read-only (absent ones are shared): build the new lists, then set them.
      const preconditions = action.preconditions.slice();
      const readSet = action.read_set.slice();
      for (const key of new Set(phantoms)) {
        if (!hasExistsGate(preconditions, key)) {
          preconditions.push({ key, operator: "exists", value: null, description: `was state dependency '${key}', which no earlier action writes` });
        }
        if (!readSet.includes(key)) readSet.push(key);
      }
      action.preconditions = preconditions;
      action.read_set = readSet;
    }
    for (const key of effectiveWriteSet(action)) written.add(key);
  }
  return proposal;
}
