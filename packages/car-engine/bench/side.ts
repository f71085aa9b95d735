/**
 * One side of a comparison, run in its own process by bench/run.ts so that
 * neither side's JIT state, heap or lingering timers slow the other
 * (LangGraph.js first in one process slows whatever follows it 3–5×).
 * Usage: side.ts langgraph|engine <shape> <n>, or side.ts memory <n>.
 * Prints one JSON line.
 */
import { langGraphOf } from "./langgraph.ts";
import { Runtime } from "../src/index.ts";
import { cpuTimeIt, engineMs, gc, runOnce, runtime, timeIt } from "./measure.ts";
import { proposalOf } from "./shapes.ts";
import type { Shape } from "./shapes.ts";

const [side, a, b] = process.argv.slice(2);

async function memory(n: number): Promise<{ heapPeakBytes: number; rssPeakBytes: number; retainedBytes: number; events: number }> {
  if (gc === undefined) throw new Error("memory needs --expose-gc");
  // Warm the JIT on a small run first, so compiled code is not counted as run memory.
  await runtime("async").executeProposal(proposalOf("fan-out", 2_000));
  const proposal = proposalOf("fan-out", n);
  gc();
  const base = process.memoryUsage();
  let heapPeak = base.heapUsed;
  let rssPeak = base.rss;
  const sample = (): void => {
    const m = process.memoryUsage();
    heapPeak = Math.max(heapPeak, m.heapUsed);
    rssPeak = Math.max(rssPeak, m.rss);
  };
  // A fan-out of async no-op tools runs on microtasks alone, so a timer never fires
  // mid-run: the tool itself samples every 500 calls (and the end is sampled), so
  // the peak is seen while all the calls are in flight, not only after the run.
  let calls = 0;
  const rt = new Runtime();
  rt.registerTool("noop", async () => {
    if (++calls % 500 === 0) sample();
    return { ok: true };
  });
  const result = await rt.executeProposal(proposal);
  sample();
  if (result.results.length !== n) throw new Error("bad result");
  gc();
  return {
    heapPeakBytes: heapPeak - base.heapUsed,
    rssPeakBytes: rssPeak - base.rss,
    retainedBytes: process.memoryUsage().heapUsed - base.heapUsed,
    events: rt.events.count(),
  };
}

async function main(): Promise<unknown> {
  if (side === "memory") return memory(Number(a));
  const shape = a as Shape;
  const n = Number(b);
  if (side === "langgraph") {
    const graph = langGraphOf(shape as "fan-out" | "chain", n);
    const invoke = () => graph.invoke({ n: 0 }, { recursionLimit: 5_000 });
    await timeIt(invoke, 2);
    return { ms: await timeIt(invoke, 5), cpuMs: await cpuTimeIt(invoke, 5) };
  }
  if (side === "engine") {
    await engineMs(shape, n, "async", 3);
    const proposal = proposalOf(shape, n);
    return { ms: await engineMs(shape, n, "async", 5), cpuMs: await cpuTimeIt(() => runOnce(shape, proposal, "async"), 5) };
  }
  throw new Error(`unknown side '${side}'`);
}

console.log(JSON.stringify(await main()));
