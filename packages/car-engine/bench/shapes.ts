/** The raw-Promise floors of the benchmark shapes; the shapes themselves come from the private test kit, shared with the durable stores' bench. */
import { type Shape, type ShapeAction, type ToolKind, tools } from "@car/test-kit/shapes";

export { proposalOf, type Shape, type ShapeAction, type ToolKind, tools } from "@car/test-kit/shapes";

/** The same shape as bare promises: the tool called once per node behind one promise hop, dependencies awaited, no bookkeeping. */
export function promiseFloor(shape: Shape, n: number, kind: ToolKind): Promise<void> {
  const tool = tools[kind];
  return floorOf(shape, n, () => Promise.resolve().then(tool));
}

const NONE: readonly never[] = Object.freeze([]);
const EMPTY = Object.freeze({});

/**
 * The raw-Promise floor that also does what any run must do before it starts
 * and keeps what it must keep once it is over, as plain records of the same
 * shapes: a copy of every action (validation comes before the first call,
 * and `proposal_received` records the proposal) with an index of their ids
 * to resolve dependencies by, and its `action_validated` event; per action
 * then its `action_started` and `action_succeeded` events, its result and the copy
 * of its output. Keeping them is what makes a run's garbage collection grow
 * faster than its size: at 10k they fit in the young generation, at 100k
 * every scavenge copies them. `proposal` is built beforehand, as the
 * engine's is.
 */
export function keepingFloor(shape: Shape, proposal: { actions: ShapeAction[] }, kind: ToolKind): Promise<unknown[]> {
  const tool = tools[kind];
  const index = new Map<string, number>();
  const parsed = proposal.actions.map((a, i) => {
    index.set(a.id, i);
    return {
      id: a.id,
      type: a.type,
      tool: a.tool,
      parameters: EMPTY,
      preconditions: NONE,
      expected_effects: EMPTY,
      dependencies: a.dependencies.length === 0 ? NONE : [...a.dependencies],
      state_dependencies: NONE,
      read_set: NONE,
      write_set: NONE,
      assumptions: NONE,
      invocation_mode: "one_shot",
      reversibility: "irreversible",
      idempotent: false,
      max_retries: 3,
      failure_behavior: "abort",
      metadata: EMPTY,
    };
  });
  const kept: unknown[] = [parsed, index];
  const event = (kind: string, action_id: string) => ({ kind, proposal_id: "p", action_id, timestamp: "t", data: EMPTY, seq: kept.length });
  for (const a of parsed) {
    for (const d of a.dependencies) if (!index.has(d)) throw new Error(`unknown dependency '${d}'`);
    kept.push(event("action_validated", a.id));
  }
  let next = 0;
  const node = (): Promise<unknown> => {
    const id = parsed[next++]!.id;
    kept.push(event("action_started", id));
    return Promise.resolve()
      .then(tool)
      .then((output) => {
        kept.push(event("action_succeeded", id), {
          action_id: id,
          status: "succeeded",
          output: { ...(output as object) },
          error: null,
          state_changes: EMPTY,
          duration_ms: 0,
          timestamp: "t",
        });
      });
  };
  return floorOf(shape, parsed.length, node).then(() => kept);
}

/** Runs `node` once per action of the shape: all at once (fan-out), one after another (chain), or level by level. */
async function floorOf(shape: Shape, n: number, node: () => Promise<unknown>): Promise<void> {
  if (shape === "fan-out") {
    await Promise.all(Array.from({ length: n }, node));
  } else if (shape === "chain") {
    for (let i = 0; i < n; i++) await node();
  } else {
    const width = Math.round(Math.sqrt(n));
    const depth = Math.round(n / width);
    for (let l = 0; l < depth; l++) await Promise.all(Array.from({ length: width }, node));
  }
}
