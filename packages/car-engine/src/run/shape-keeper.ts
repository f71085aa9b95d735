/**
 * Keeps the engine's hidden classes alive between proposals.
 *
 * V8 builds the hidden class ("map") of a class instance field by field, and
 * holds those maps only weakly: once no instance of the class is left, a full
 * GC drops them and deoptimizes every function compiled against them. Between
 * two proposals nothing of a run survives (its scheduler, dispatcher, call
 * records, contexts, event buffer), so after a full GC — V8's memory reducer
 * runs one whenever the process goes idle — the next proposal ran its whole
 * path in unoptimized code and recompiled it on the way: on 10k-action
 * proposals about 3× the CPU time per action of a run that found its code
 * still optimized (measured with `--trace-deopt`: some 40 functions marked
 * "weak objects" after each full GC).
 *
 * The cure is one live instance of every class on a run's path. Rather than
 * building each by hand (with field types that must match the real ones),
 * one small proposal is run on a private runtime and left waiting on a call
 * that never settles: a run in flight holds exactly the objects a real run
 * holds, with real field types. It costs a few kilobytes once per process,
 * writes nothing anywhere but its own in-memory log, and holds no timer or
 * handle (it never keeps a process alive).
 */
import type { ProposalInput } from "@car/ir";
import type { ToolHandler } from "../tools/handler.ts";

/** What the keeper uses of a runtime (the `Runtime` itself, passed in to avoid an import cycle). */
export interface ShapeKeeperRuntime {
  registerTool(name: string, handler: ToolHandler): unknown;
  executeProposal(proposal: ProposalInput): Promise<unknown>;
}

/** The resolvers of the parked calls: reachable from here, they keep the parked run and all it holds reachable. */
const parked: ((value: unknown) => void)[] = [];
let started = false;

/** The parked proposal: an async and a sync call that finish, then one that waits for ever after both. */
const KEEPER_PROPOSAL: ProposalInput = {
  actions: [
    { id: "async_step", type: "tool_call", tool: "async_step", parameters: {} },
    { id: "sync_step", type: "tool_call", tool: "sync_step", parameters: {} },
    { id: "parked", type: "tool_call", tool: "parked", parameters: {}, dependencies: ["async_step", "sync_step"] },
  ],
};

/** Starts the parked run, once per process; later calls (including the parked runtime's own) do nothing. */
export function keepRunShapes(newRuntime: () => ShapeKeeperRuntime): void {
  if (started) return;
  started = true;
  const runtime = newRuntime();
  runtime.registerTool("async_step", async () => ({ ok: true }));
  runtime.registerTool("sync_step", () => null);
  runtime.registerTool("parked", () => new Promise((resolve) => parked.push(resolve)));
  runtime.executeProposal(KEEPER_PROPOSAL).catch(() => {
    // Never settles while parked; should it ever fail, the only loss is the speed-up.
  });
}

/** How many calls are parked (1 once the keeper started and its run reached the parked call). */
export function parkedCalls(): number {
  return parked.length;
}
