/**
 * The forward walk verify and simulate share. It visits the DAG level by
 * level: every action in a level sees the initial state plus the declared
 * `expected_effects` of all earlier levels, then the level's effects land in
 * declaration order. Only declared effects exist here; nothing runs.
 *
 * Two models share the walk's order (agent-ir-spec.md, "verify and simulate
 * treat blocked actions differently"), each walked on its own — verify needs
 * only the first, simulate only the second:
 * - the *declared* model applies every action's effects, even a blocked
 *   one's, so verify reports each real problem once instead of a cascade of
 *   knock-on "not available" findings;
 * - the *simulated* model withholds a blocked action's
 *   effects, as the executor rejects it before dispatch, and drops its
 *   dependants along data dependencies (explicit `dependencies` and the
 *   writer a `state_dependencies` key is read from). Its gates see only the
 *   simulated state: a precondition the declared model fails only because of
 *   a blocked action's effect holds here, as it does in the engine (DECISIONS
 *   §13: simulate predicts what the engine leaves behind).
 *   `failure_behavior` is not modelled.
 */
import type { Action, DependencyGraph, JsonValue } from "@car/ir";
import type { Precondition } from "@car/ir";
import type { PreconditionMiss } from "@car/ir/internal";
import { getOwn } from "@car/ir";
import { checkPrecondition, pushWrittenKeys, stateDependencyKeys } from "@car/ir/internal";

/**
 * Why an action is blocked. A failed precondition keeps what it found, not
 * its message: verify words only the failures it reports one by one
 * (`preconditionFailureMessage`), and a conflict-heavy plan has 100k.
 */
export type BlockReason = { kind: "precondition"; key: string; precondition: Precondition; miss: PreconditionMiss } | { kind: "state_dependency"; key: string };

/** The declared model: the state after every action's declared effects, and why each action could not run. */
export interface DeclaredWalk {
  readonly declared: Map<string, JsonValue>;
  /** Why action `i` could not run; `undefined` when it could. */
  readonly blocked: readonly (readonly BlockReason[] | undefined)[];
}

/** The simulated model: the post-state, and for every action whose effects did not land 1 (rejected before dispatch) or 2 (dispatched and failed). */
export interface SimulatedWalk {
  readonly simulated: Map<string, JsonValue>;
  readonly skipped: Uint8Array;
}

/** Action indices per level, declaration order inside a level, flat: level l is `members[start[l] .. start[l + 1])`. */
function levelBuckets(graph: DependencyGraph): { start: Int32Array; members: Int32Array } {
  const n = graph.level.length;
  let levels = 0;
  for (let i = 0; i < n; i++) levels = Math.max(levels, graph.level[i]! + 1);
  const start = new Int32Array(levels + 1);
  for (let i = 0; i < n; i++) start[graph.level[i]! + 1]!++;
  for (let l = 0; l < levels; l++) start[l + 1]! += start[l]!;
  const fill = start.slice(0, levels);
  const members = new Int32Array(n);
  for (let i = 0; i < n; i++) members[fill[graph.level[i]!]!++] = i;
  return { start, members };
}

/** What `gate` returns when asked only whether an action is blocked: shared, so answering allocates nothing. */
const BLOCKED: readonly BlockReason[] = Object.freeze([]);

/**
 * Why `action` cannot run against `state`, or `undefined`. With `why` false
 * it stops at the first failure and returns `BLOCKED`: simulate needs only
 * whether, and in a conflict-heavy plan every one of 1M actions is blocked.
 */
function gate(action: Action, state: ReadonlyMap<string, JsonValue>, why: boolean): readonly BlockReason[] | undefined {
  // By index: most lists are the frozen EMPTY_LIST, which `for…of` allocates an iterator for.
  let reasons: BlockReason[] | undefined;
  const preconditions = action.preconditions;
  for (let p = 0; p < preconditions.length; p++) {
    const pre = preconditions[p]!;
    const miss = checkPrecondition(pre, state);
    if (miss === undefined) continue;
    if (!why) return BLOCKED;
    (reasons ??= []).push({ kind: "precondition", key: pre.key, precondition: pre, miss });
  }
  const stateDeps = action.state_dependencies;
  for (let k = 0; k < stateDeps.length; k++) {
    if (state.has(stateDeps[k]!)) continue;
    if (!why) return BLOCKED;
    (reasons ??= []).push({ kind: "state_dependency", key: stateDeps[k]! });
  }
  return reasons;
}

/** Every action's data predecessors, flat: action i takes data from `preds[start[i] .. start[i + 1])`. */
export interface DataPredecessors {
  readonly start: Int32Array;
  readonly preds: ArrayLike<number>;
}

/**
 * The actions each action takes data from: its explicit `dependencies` and,
 * per `state_dependencies` key, the latest earlier-declared writer (the same
 * rule `dependencyEdges` orders by; only keys some action lists are
 * tracked). Ordering-only edges between same-key `state_write`s carry no
 * data and are left out.
 */
export function dataPredecessors(actions: readonly Action[], graph: DependencyGraph): DataPredecessors {
  // The graph's only other edges order same-key state_writes: without one, its edges are exactly these
  // (deduplicated), and no id is looked up again (at 100k actions those lookups were a third of simulate).
  if (!actions.some((action) => action.type === "state_write")) return { start: graph.flat.predStart, preds: graph.flat.preds };
  const readKeys = stateDependencyKeys(actions);
  const lastWriter = new Map<string, number>();
  const writes: string[] = []; // one buffer, not a set per action
  const start = new Int32Array(actions.length + 1);
  const preds: number[] = [];
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    const deps = action.dependencies;
    for (let d = 0; d < deps.length; d++) {
      const j = graph.indexOf.get(deps[d]!);
      if (j !== undefined) preds.push(j);
    }
    const stateDeps = action.state_dependencies;
    for (let k = 0; k < stateDeps.length; k++) {
      const j = lastWriter.get(stateDeps[k]!);
      if (j !== undefined) preds.push(j);
    }
    start[i + 1] = preds.length;
    if (readKeys === undefined) continue;
    writes.length = 0;
    pushWrittenKeys(action, writes);
    for (const key of writes) if (readKeys.has(key)) lastWriter.set(key, i);
  }
  return { start, preds };
}

/**
 * Every action's declared effects as the engine applies them, flat: action
 * `i` sets `keys[e]` to `values[e]` for each `e` in `start[i] .. start[i + 1]`,
 * in that order. A `state_write` writes its own `{key, value}` last (DECISIONS
 * §15; the value wins over an `expected_effects` entry for the same key).
 */
export interface FlatEffects {
  readonly start: Int32Array;
  readonly keys: readonly string[];
  readonly values: readonly JsonValue[];
}

/**
 * Reads every action's effects once, in declaration order. The walks visit
 * actions level by level, all over the proposal, and reaching from there
 * into each action's own effects object (with a hidden class of its own per
 * key name) cost more than this one pass: on the random 1M plan, landing
 * effects took 1.6 s that way and takes 0.9 s now, plus 0.4 s for the pass.
 */
export function flatEffects(actions: readonly Action[]): FlatEffects {
  const start = new Int32Array(actions.length + 1);
  // Sized for one effect per action, the common case, so a 1M-action plan's lists are not regrown
  // step by step from empty; trimmed to what was written at the end.
  const keys: string[] = new Array(actions.length);
  const values: JsonValue[] = new Array(actions.length);
  let e = 0;
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    const effects = action.expected_effects;
    const own = action.type === "state_write" ? getOwn(action.parameters, "key") : undefined;
    for (const key in effects) {
      if (!Object.hasOwn(effects, key) || key === own) continue;
      keys[e] = key;
      values[e++] = effects[key]!;
    }
    if (typeof own === "string") {
      keys[e] = own;
      values[e++] = getOwn(action.parameters, "value") ?? null;
    }
    start[i + 1] = e;
  }
  keys.length = e;
  values.length = e;
  return { start, keys, values };
}

/** Lands action `i`'s declared effects on `state`. */
function applyEffects(effects: FlatEffects, i: number, state: Map<string, JsonValue>): void {
  for (let e = effects.start[i]!; e < effects.start[i + 1]!; e++) state.set(effects.keys[e]!, effects.values[e]!);
}

/**
 * Visits the actions level by level: `check` for every action of a level
 * (each sees the state the earlier levels left), then `land` for each, in
 * declaration order.
 */
function byLevel(graph: DependencyGraph, check: (i: number) => void, land: (i: number) => void): void {
  const levels = levelBuckets(graph);
  for (let l = 0; l + 1 < levels.start.length; l++) {
    const from = levels.start[l]!;
    const to = levels.start[l + 1]!;
    for (let m = from; m < to; m++) check(levels.members[m]!);
    for (let m = from; m < to; m++) land(levels.members[m]!);
  }
}

/** Walks the declared model (verify's): every action's effects land, blocked or not. */
export function declaredWalk(actions: readonly Action[], graph: DependencyGraph, initial: ReadonlyMap<string, JsonValue>): DeclaredWalk {
  const declared = new Map(initial);
  const blocked: (readonly BlockReason[] | undefined)[] = new Array(actions.length);
  const effects = flatEffects(actions);
  byLevel(
    graph,
    (i) => {
      blocked[i] = gate(actions[i]!, declared, true);
    },
    (i) => applyEffects(effects, i, declared),
  );
  return { declared, blocked };
}

/**
 * Walks the simulated model (simulate's) on `dataPreds`
 * (`dataPredecessors(actions, graph)`) and `effects` (`flatEffects(actions)`),
 * both computed once per proposal: an action lands nothing when its gate
 * fails or a data predecessor did not land. `dispatch`, when given, decides
 * whether each dispatched action succeeds (Monte Carlo draws); absent, all do.
 */
export function simulatedWalk(
  actions: readonly Action[],
  graph: DependencyGraph,
  initial: ReadonlyMap<string, JsonValue>,
  dataPreds: DataPredecessors,
  effects: FlatEffects,
  dispatch?: (i: number) => boolean,
): SimulatedWalk {
  const simulated = new Map(initial);
  const skipped = new Uint8Array(actions.length);
  byLevel(
    graph,
    (i) => {
      for (let e = dataPreds.start[i]!; e < dataPreds.start[i + 1]!; e++) {
        if (skipped[dataPreds.preds[e]!] !== 0) {
          skipped[i] = 1;
          return;
        }
      }
      if (gate(actions[i]!, simulated, false) !== undefined) skipped[i] = 1;
      else if (dispatch !== undefined && !dispatch(i)) skipped[i] = 2;
    },
    (i) => {
      if (skipped[i] === 0) applyEffects(effects, i, simulated);
    },
  );
  return { simulated, skipped };
}
