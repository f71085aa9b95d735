/**
 * The floor: one pass over a parsed proposal that reads every field the
 * checks read (ids, dependencies, preconditions, effects, the key lists)
 * and keeps the state once, as a `Map` from each written key to its value
 * that every read key is looked up in — the least a check that models state
 * must do, with no graph, no levels and no result. Its growth per 10× is
 * what the memory system (caches, TLB, collection) adds to any such pass.
 */
import type { Action, JsonValue } from "@car/ir";

/** A sum of string lengths, lookups found and keys kept, returned so nothing is optimized away. */
export function stateFloor(actions: readonly Action[]): number {
  const state = new Map<string, JsonValue>();
  let sum = 0;
  const read = (list: readonly string[]) => {
    for (let k = 0; k < list.length; k++) if (state.has(list[k]!)) sum++;
  };
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    sum += action.id.length + action.type.length;
    const deps = action.dependencies;
    for (let d = 0; d < deps.length; d++) sum += deps[d]!.length;
    read(action.state_dependencies);
    read(action.read_set);
    const preconditions = action.preconditions;
    for (let p = 0; p < preconditions.length; p++) if (state.has(preconditions[p]!.key)) sum++;
    const assumptions = action.assumptions;
    for (let a = 0; a < assumptions.length; a++) sum += assumptions[a]!.key.length;
    for (let w = 0; w < action.write_set.length; w++) sum += action.write_set[w]!.length;
    const effects = action.expected_effects;
    for (const key in effects) if (Object.hasOwn(effects, key)) state.set(key, effects[key]!);
    for (const key in action.parameters) if (Object.hasOwn(action.parameters, key)) sum++;
  }
  return sum + state.size;
}
