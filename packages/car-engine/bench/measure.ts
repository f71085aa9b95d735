/** Timing helpers shared by the bench's parent process and its one-side child processes. */
import { Runtime } from "../src/index.ts";
import { proposalOf, tools } from "./shapes.ts";
import type { Shape, ToolKind } from "./shapes.ts";

export const gc = (globalThis as { gc?: () => void }).gc;

export function runtime(kind: ToolKind): Runtime {
  const rt = new Runtime();
  rt.registerTool("noop", tools[kind]);
  return rt;
}

/** Best wall time of `repeats` runs, in ms, each after a full GC when exposed. */
export async function timeIt(fn: () => Promise<unknown>, repeats: number): Promise<number> {
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    gc?.();
    const t0 = performance.now();
    await fn();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/**
 * Best CPU time (user + system) of `repeats` runs, in ms. On a shared,
 * loaded machine wall time mostly measures the other jobs; CPU time
 * includes GC helper threads but not the time spent waiting for a core.
 */
export async function cpuTimeIt(fn: () => Promise<unknown>, repeats: number): Promise<number> {
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    gc?.();
    const c0 = process.cpuUsage();
    await fn();
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / 1000);
  }
  return best;
}

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

/** µs per action of `ms` spread over `n` actions. */
export const usPer = (ms: number, n: number): number => (ms * 1000) / n;
