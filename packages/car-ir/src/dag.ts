/**
 * The one source of truth for ordering (DECISIONS.md §1). Edges come from
 * explicit `dependencies` (any direction; unknown ids and cycles are errors)
 * and from `state_dependencies` (the latest *earlier-declared* writer of the
 * key), and `state_write`s to one key keep declaration order. Verify, the
 * transaction check and the engine all read edges from here.
 *
 * Everything is index-based arrays: this runs on every proposal, at up to
 * a million actions, so no per-edge objects and no graph library on this
 * path. The predecessors are also kept flat (`FlatEdges`, CSR over
 * declaration indices), written where each id is resolved, so kernels take
 * them without a conversion pass. The ordering can run in @car/native's
 * kernel (see `NATIVE_LEVELS_MIN_ACTIONS`); `levelsFromPreds` here is the
 * reference.
 */
import type { Action } from "./types.ts";
import { CarError } from "./errors.ts";
import { pushWrittenKeys, stateDependencyKeys } from "./state-sets.ts";
import { Int32List } from "./int32-list.ts";
import { nativeKernels } from "@car/native";
import { guarded } from "./input.ts";

export interface DependencyGraph {
  /** Action ids in declaration order. */
  readonly ids: readonly string[];
  /** Action id → declaration index. */
  readonly indexOf: ReadonlyMap<string, number>;
  /** `preds[i]`: indices that must finish before action `i` starts (deduplicated; built from `flat` on first read). */
  readonly preds: readonly (readonly number[])[];
  /** `succs[i]`: indices waiting on action `i`. */
  readonly succs: readonly (readonly number[])[];
  /** A topological order of all indices (declaration order among ready actions). */
  readonly order: readonly number[];
  /** `level[i]`: length of the longest dependency chain ending at `i`. */
  readonly level: readonly number[];
  /** The same predecessors, order and levels as flat typed arrays (for kernels, native or not). */
  readonly flat: FlatEdges;
}

/**
 * A graph's edges in compressed sparse rows: action `i`'s predecessors are
 * `preds[predStart[i] .. predStart[i + 1])`, in the order of `graph.preds[i]`.
 * `order` and `level` are the graph's, as `Int32Array`s.
 */
export interface FlatEdges {
  readonly predStart: Int32Array;
  readonly preds: Int32Array;
  readonly order: Int32Array;
  readonly level: Int32Array;
}

function indexIds(actions: readonly Action[]): Map<string, number> {
  const indexOf = new Map<string, number>();
  const duplicates: { pointer: string; message: string }[] = [];
  for (let i = 0; i < actions.length; i++) {
    const id = actions[i]!.id;
    if (indexOf.has(id)) duplicates.push({ pointer: `/actions/${i}/id`, message: `duplicate action id '${id}'` });
    else indexOf.set(id, i);
  }
  if (duplicates.length > 0) {
    throw new CarError("invalid_proposal", `duplicate action ids: ${duplicates.map((d) => d.message).join("; ")}`, { problems: duplicates });
  }
  return indexOf;
}

/**
 * The one array every action without predecessors (or successors) shares: at
 * 100k+ actions an empty array each is garbage the collector copies and
 * promotes for nothing. Frozen, so no caller can push into everyone's list.
 */
const NONE: readonly number[] = Object.freeze([]);

/**
 * Every action's predecessors, flat (CSR: action `i`'s are `flat[start[i] .. start[i + 1])`),
 * deduplicated and filled as each edge resolves. No array per action: at a
 * million actions those are a million objects the collector must promote and
 * mark; `graph.preds` builds them from here only when asked.
 */
function collectPreds(actions: readonly Action[], indexOf: ReadonlyMap<string, number>): { start: Int32Array; flat: Int32List } {
  const n = actions.length;
  const start = new Int32Array(n + 1);
  const flat = new Int32List(2 * n);
  // Last writers are tracked only for keys some action lists in `state_dependencies`
  // (most plans list none): a map of every written key would cost a million sets at 1M actions.
  const readKeys = stateDependencyKeys(actions);
  const lastWriter = new Map<string, number>();
  const lastStateWrite = new Map<string, number>();
  const unknown: { pointer: string; message: string }[] = [];
  // `seen[j] === i + 1` marks j as already a predecessor of i: deduplication
  // without a Set per action. No closures in this loop: it runs per action.
  const seen = new Int32Array(n);
  const writes: string[] = [];
  for (let i = 0; i < n; i++) {
    const action = actions[i]!;
    const stamp = i + 1;
    const deps = action.dependencies;
    for (let d = 0; d < deps.length; d++) {
      const j = indexOf.get(deps[d]!);
      if (j === undefined) {
        unknown.push({ pointer: `/actions/${i}/dependencies/${d}`, message: `unknown action id '${deps[d]}'` });
      } else if (seen[j] !== stamp) {
        seen[j] = stamp;
        flat.push(j);
      }
    }
    const stateDeps = action.state_dependencies;
    for (let k = 0; k < stateDeps.length; k++) {
      const j = lastWriter.get(stateDeps[k]!);
      if (j !== undefined && seen[j] !== stamp) {
        seen[j] = stamp;
        flat.push(j);
      }
    }
    if (readKeys === undefined && action.type !== "state_write") {
      start[i + 1] = flat.length;
      continue;
    }
    writes.length = 0;
    pushWrittenKeys(action, writes);
    if (action.type === "state_write") {
      for (const key of writes) {
        const j = lastStateWrite.get(key);
        if (j !== undefined && j !== i && seen[j] !== stamp) {
          seen[j] = stamp;
          flat.push(j);
        }
        lastStateWrite.set(key, i);
      }
    }
    if (readKeys !== undefined) for (const key of writes) if (readKeys.has(key)) lastWriter.set(key, i);
    start[i + 1] = flat.length;
  }
  if (unknown.length > 0) {
    throw new CarError("invalid_proposal", `dependencies name unknown actions: ${unknown.map((u) => u.message).join("; ")}`, { problems: unknown });
  }
  return { start, flat };
}

/**
 * Whether no action can have a predecessor: none lists dependencies or
 * state dependencies, and none writes state (consecutive state writes of one
 * key are ordered). A one-action proposal, or a plain fan-out, skips the
 * edge collection and its working arrays.
 */
function hasNoEdges(actions: readonly Action[]): boolean {
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    if (action.dependencies.length > 0 || action.state_dependencies.length > 0 || action.type === "state_write") return false;
  }
  return true;
}

/** `graph.preds` or `graph.succs` from their CSR: one exact-length array per action, the shared `NONE` when it has none. */
function rowsFromFlat(start: Int32Array, flat: Int32Array): (readonly number[])[] {
  const n = start.length - 1;
  const rows: (readonly number[])[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const from = start[i]!;
    const count = start[i + 1]! - from;
    if (count === 0) {
      rows[i] = NONE;
      continue;
    }
    const mine: number[] = new Array(count);
    for (let k = 0; k < count; k++) mine[k] = flat[from + k]!;
    rows[i] = mine;
  }
  return rows;
}

/** Finds one cycle among nodes Kahn's algorithm could not order, as action ids. */
function findCycle(preds: readonly (readonly number[])[], remaining: ReadonlySet<number>, ids: readonly string[]): string[] {
  const state = new Map<number, 1 | 2>(); // 1 = on the DFS stack, 2 = done
  for (const start of remaining) {
    if (state.has(start)) continue;
    const stack: { node: number; next: number }[] = [{ node: start, next: 0 }];
    const path: number[] = [start];
    state.set(start, 1);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const ps = preds[top.node]!;
      if (top.next < ps.length) {
        const p = ps[top.next++]!;
        if (!remaining.has(p)) continue;
        const s = state.get(p);
        if (s === 1) {
          const cycle = path.slice(path.indexOf(p)).reverse();
          return cycle.map((n) => ids[n]!);
        }
        if (s === undefined) {
          state.set(p, 1);
          stack.push({ node: p, next: 0 });
          path.push(p);
        }
      } else {
        state.set(top.node, 2);
        stack.pop();
        path.pop();
      }
    }
  }
  return [...remaining].map((n) => ids[n]!);
}

/**
 * The successors of CSR predecessors, as CSR too: the actions waiting on `p`
 * are `succs[succStart[p] .. succStart[p + 1])`, in declaration order (as
 * `graph.succs[p]`). Two typed arrays, where `graph.succs` is an array per
 * action: what the engine's scheduler walks.
 */
export function successorRows(predStart: Int32Array, preds: Int32Array): { succStart: Int32Array; succs: Int32Array } {
  const n = predStart.length - 1;
  // Counts, then each row's end; filling from the last action down moves every end back to its row's start.
  const succStart = new Int32Array(n + 1);
  for (let e = 0; e < preds.length; e++) succStart[preds[e]!]!++;
  for (let i = 1; i < n; i++) succStart[i]! += succStart[i - 1]!;
  succStart[n] = preds.length;
  const succs = new Int32Array(preds.length);
  for (let i = n - 1; i >= 0; i--) {
    const begin = predStart[i]!;
    for (let e = predStart[i + 1]! - 1; e >= begin; e--) succs[--succStart[preds[e]!]!] = i;
  }
  return { succStart, succs };
}

/**
 * Kahn's algorithm over predecessors in CSR form: a FIFO queue seeded in
 * declaration order, successors visited in declaration order; fills `order`
 * (a topological order) and `level` (longest chain ending at each action)
 * and returns how many actions it ordered — fewer than all means a cycle.
 * The reference for @car/native's `levels`, with the same signature.
 */
export function levelsFromPreds(predStart: Int32Array, preds: Int32Array, order: Int32Array, level: Int32Array): number {
  const n = predStart.length - 1;
  const { succStart, succs } = successorRows(predStart, preds);
  const pending = new Int32Array(n);
  for (let i = 0; i < n; i++) pending[i] = predStart[i + 1]! - predStart[i]!;
  level.fill(0);
  let tail = 0;
  for (let i = 0; i < n; i++) if (pending[i] === 0) order[tail++] = i;
  for (let head = 0; head < tail; head++) {
    const i = order[head]!;
    const next = level[i]! + 1;
    const end = succStart[i + 1]!;
    for (let e = succStart[i]!; e < end; e++) {
      const s = succs[e]!;
      if (level[s]! < next) level[s] = next;
      if (--pending[s]! === 0) order[tail++] = s;
    }
  }
  return tail;
}

/**
 * From how many actions `auto` mode orders natively. Infinite: on the flat
 * predecessors both paths run the same Kahn's algorithm, memory-bound, and
 * the kernel measured 1.3–1.8× `levelsFromPreds` from 1k to 100k actions
 * and 2.5× at 1M (@car/verify `bench:kernels`), short of the 3× a native
 * path must earn.
 * `CAR_NATIVE=always` still runs it, and the differential tests keep it
 * identical.
 */
export const NATIVE_LEVELS_MIN_ACTIONS = Number.POSITIVE_INFINITY;

/**
 * Computes every edge of a proposal's DAG and a topological order with levels.
 * Throws `invalid_proposal` for duplicate ids, unknown dependency ids and
 * cycles (naming the ids on the cycle).
 */
export function dependencyEdges(actions: readonly Action[]): DependencyGraph {
  // Actions not in parsed shape (a `null` among them) are `invalid_proposal` too, never a `TypeError`.
  return guarded("invalid_proposal", "proposal", () => {
    // Not a list: the edge-free shortcut would read no action and build a graph of `undefined` length.
    if (!Array.isArray(actions)) throw new TypeError("actions is not a list");
    return edgesOf(actions, indexIds(actions));
  });
}

/**
 * `dependencyEdges` on an id index already built: `indexOf.get(actions[i].id) === i`
 * for every action, each id once. The parser has one (it checked the ids for
 * duplicates), so the proposal's ids are hashed once, not twice. Not exported
 * from the package: a wrong index would give a wrong graph.
 */
export function edgesOf(actions: readonly Action[], indexOf: Map<string, number>): DependencyGraph {
  const n = actions.length;
  const edgeless = hasNoEdges(actions);
  const { start: predStart, flat } = edgeless ? { start: new Int32Array(n + 1), flat: undefined } : collectPreds(actions, indexOf);
  const flatPreds = flat === undefined ? new Int32Array(0) : flat.view();
  const orderFlat = new Int32Array(n);
  const levelFlat = new Int32Array(n);
  let count = n;
  // Without edges every action is on level 0 and declaration order is the order: what Kahn's algorithm would find.
  if (edgeless) for (let i = 0; i < n; i++) orderFlat[i] = i;
  else count = (nativeKernels(n, NATIVE_LEVELS_MIN_ACTIONS)?.levels ?? levelsFromPreds)(predStart, flatPreds, orderFlat, levelFlat);
  const ids: string[] = new Array(n);
  for (let i = 0; i < n; i++) ids[i] = actions[i]!.id;
  if (count < n) {
    const ordered = new Set(orderFlat.subarray(0, count));
    const remaining = new Set<number>();
    for (let i = 0; i < n; i++) if (!ordered.has(i)) remaining.add(i);
    const cycle = findCycle(rowsFromFlat(predStart, flatPreds), remaining, ids);
    throw new CarError("invalid_proposal", `dependency cycle: ${[...cycle, cycle[0]].join(" -> ")}`, {
      cycle,
      problems: [{ pointer: `/actions/${indexOf.get(cycle[0]!)}/dependencies`, message: `dependency cycle through ${cycle.join(", ")}` }],
    });
  }
  const order: number[] = new Array(n);
  const level: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    order[i] = orderFlat[i]!;
    level[i] = levelFlat[i]!;
  }
  return new EdgeGraph(ids, indexOf, order, level, { predStart, preds: flatPreds, order: orderFlat, level: levelFlat });
}

/**
 * A graph whose per-action rows are built on first use: verify reads the
 * flat arrays only. A class, not an object literal with getters: such a
 * literal defines its accessors anew for every graph, which cost a
 * one-action proposal more than the rest of its graph.
 */
class EdgeGraph implements DependencyGraph {
  #preds: (readonly number[])[] | undefined;
  #succs: (readonly number[])[] | undefined;

  constructor(
    readonly ids: readonly string[],
    readonly indexOf: ReadonlyMap<string, number>,
    readonly order: readonly number[],
    readonly level: readonly number[],
    readonly flat: FlatEdges,
  ) {}

  get preds(): readonly (readonly number[])[] {
    return (this.#preds ??= rowsFromFlat(this.flat.predStart, this.flat.preds));
  }

  get succs(): readonly (readonly number[])[] {
    if (this.#succs === undefined) {
      const rows = successorRows(this.flat.predStart, this.flat.preds);
      this.#succs = rowsFromFlat(rows.succStart, rows.succs);
    }
    return this.#succs;
  }
}

/**
 * Groups a graph's actions into levels of ids, declaration order inside a
 * level. Every array is made at its exact length: a million-action chain has
 * a million levels, and growing each by `push` costs several times the
 * memory and time.
 */
export function levelsOf(graph: DependencyGraph): string[][] {
  const n = graph.ids.length;
  let depth = 0;
  for (let i = 0; i < n; i++) if (graph.level[i]! >= depth) depth = graph.level[i]! + 1;
  const fill = new Int32Array(depth);
  for (let i = 0; i < n; i++) fill[graph.level[i]!]!++;
  const levels: string[][] = new Array(depth);
  for (let l = 0; l < depth; l++) levels[l] = new Array(fill[l]!);
  fill.fill(0);
  for (let i = 0; i < n; i++) {
    const l = graph.level[i]!;
    levels[l]![fill[l]!++] = graph.ids[i]!;
  }
  return levels;
}

/** The layered topological order: actions in one level are independent of each other. */
export function buildDag(actions: readonly Action[]): string[][] {
  return levelsOf(dependencyEdges(actions));
}
