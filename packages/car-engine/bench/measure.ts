/** Timing helpers shared by the bench's parent process and its one-side child processes. */
import { Runtime } from "../src/index.ts";
import { proposalOf, tools } from "./shapes.ts";
import type { Shape, ToolKind } from "./shapes.ts";

export { gc, usPer } from "@car/test-kit/measure";
import { gc } from "@car/test-kit/measure";

export function runtime(kind: ToolKind): Runtime {
  const rt = new Runtime();
  rt.registerTool("noop", tools[kind]);
  return rt;
}

/** Starts a measurement; the function it returns gives the ms elapsed since. */
type Stopwatch = () => () => number;

const wallClock: Stopwatch = () => {
  const t0 = performance.now();
  return () => performance.now() - t0;
};

/** User + system CPU time: includes GC helper threads, not the time spent waiting for a core (on a loaded machine, most of the wall time). */
const cpuClock: Stopwatch = () => {
  const c0 = process.cpuUsage();
  return () => {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000;
  };
};

/** Best of `repeats` runs on `stopwatch`, in ms, each after a full GC when exposed. */
async function bestOf(fn: () => Promise<unknown>, repeats: number, stopwatch: Stopwatch): Promise<number> {
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    gc?.();
    const elapsed = stopwatch();
    await fn();
    best = Math.min(best, elapsed());
  }
  return best;
}

/** Best wall time of `repeats` runs, in ms. */
export const timeIt = (fn: () => Promise<unknown>, repeats: number): Promise<number> => bestOf(fn, repeats, wallClock);

/** Best CPU time of `repeats` runs, in ms. */
export const cpuTimeIt = (fn: () => Promise<unknown>, repeats: number): Promise<number> => bestOf(fn, repeats, cpuClock);

/** One `executeProposal` of the shape on a fresh runtime; throws unless every action ran. */
export async function runOnce(shape: Shape, proposal: ReturnType<typeof proposalOf>, kind: ToolKind): Promise<void> {
  const result = await runtime(kind).executeProposal(proposal);
  if (result.cost.actions_executed !== proposal.actions.length)
    throw new Error(`${shape}: only ${result.cost.actions_executed} of ${proposal.actions.length} executed`);
}

/** Best time of one `executeProposal` of the shape, on a fresh runtime each run. */
export async function engineMs(shape: Shape, n: number, kind: ToolKind, repeats: number): Promise<number> {
  const proposal = proposalOf(shape, n);
  return timeIt(() => runOnce(shape, proposal, kind), repeats);
}
