/**
 * Engine overhead against the raw-Promise floor of the same shape and
 * against LangGraph.js, measured in one run. Prints µs per action, ratios,
 * growth from 1k to 10k to 100k actions and memory per action at 100k.
 * Run with `npm run bench` (uses --expose-gc for the memory figure).
 */
import { Runtime } from "../src/index.ts";
import { langGraphOf } from "./langgraph.ts";
import { promiseFloor, proposalOf } from "./shapes.ts";
import type { Shape } from "./shapes.ts";

const gc = (globalThis as { gc?: () => void }).gc;

function runtime(): Runtime {
  const rt = new Runtime();
  rt.registerTool("noop", () => null);
  return rt;
}

async function timeIt(fn: () => Promise<unknown>, repeats: number): Promise<number> {
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    gc?.();
    const t0 = performance.now();
    await fn();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

async function engineMs(shape: Shape, n: number, repeats: number): Promise<number> {
  const proposal = proposalOf(shape, n);
  return timeIt(async () => {
    const result = await runtime().executeProposal(proposal);
    if (result.cost.actions_executed !== proposal.actions.length) throw new Error(`${shape} ${n}: only ${result.cost.actions_executed} executed`);
  }, repeats);
}

const us = (ms: number, n: number): string => ((ms * 1000) / n).toFixed(2);

async function main(): Promise<void> {
  // Warm up the JIT on every path.
  for (const shape of ["fan-out", "chain", "levels"] as const) await engineMs(shape, 2_000, 2);

  console.log("shape            actions  engine µs/action  floor µs/action  overhead µs/action");
  for (const shape of ["fan-out", "chain", "levels"] as const) {
    const n = 10_000;
    const engine = await engineMs(shape, n, 5);
    const floor = await timeIt(() => promiseFloor(shape, n), 5);
    console.log(`${shape.padEnd(16)} ${String(n).padStart(7)}  ${us(engine, n).padStart(16)}  ${us(floor, n).padStart(15)}  ${us(engine - floor, n).padStart(18)}`);
  }

  console.log("\nLangGraph.js, same run (1k no-op nodes)");
  for (const shape of ["fan-out", "chain"] as const) {
    const n = 1_000;
    const graph = langGraphOf(shape, n);
    const lg = await timeIt(() => graph.invoke({ n: 0 }, { recursionLimit: 5_000 }), 3);
    const engine = await engineMs(shape, n, 5);
    console.log(`${shape.padEnd(8)} langgraph ${us(lg, n)} µs/node, engine ${us(engine, n)} µs/action, engine is ${(lg / engine).toFixed(0)}× faster`);
  }

  console.log("\nGrowth (fan-out and chain): time ratio per 10× actions (linear = 10×)");
  for (const shape of ["fan-out", "chain"] as const) {
    const t1k = await engineMs(shape, 1_000, 5);
    const t10k = await engineMs(shape, 10_000, 3);
    const t100k = await engineMs(shape, 100_000, 1);
    console.log(`${shape.padEnd(8)} 1k ${t1k.toFixed(1)} ms, 10k ${t10k.toFixed(1)} ms (${(t10k / t1k).toFixed(1)}×), 100k ${t100k.toFixed(1)} ms (${(t100k / t10k).toFixed(1)}×)`);
  }

  if (gc === undefined) {
    console.log("\n(memory: run with --expose-gc)");
    return;
  }
  const n = 100_000;
  const proposal = proposalOf("fan-out", n);
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);
  const rt = runtime();
  const result = await rt.executeProposal(proposal);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  gc();
  const retained = process.memoryUsage().heapUsed - base;
  console.log(
    `\nMemory at ${n} actions (fan-out): peak ${((peak - base) / n).toFixed(0)} B/action above baseline, retained after GC ${(retained / n).toFixed(0)} B/action (results + ${rt.events.count()} events)`,
  );
  if (result.results.length !== n) throw new Error("bad result");
}

await main();
