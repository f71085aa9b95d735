/**
 * Engine overhead on the path users take — an async tool — against the
 * raw-Promise floor of the same shape measured in the same run, with the
 * synchronous `() => null` tool as a second row, and beside it what parsing
 * the proposal alone (`parseProposalWithGraph`, part of every run) costs;
 * growth 10k → 100k; peak memory per action at 100k, beside what the run
 * must keep (results, events, the proposal its log records); LangGraph.js on
 * the 1k fan-out and chain.
 * The memory figure and each side of the LangGraph comparison run in their
 * own child process. Goals are printed next to the results.
 * Run with `npm run bench` (uses --expose-gc).
 */
import { spawnSync } from "node:child_process";
import { parseProposalWithGraph } from "@car/ir";
import { fileURLToPath } from "node:url";
import { timeWithGc } from "./collection.ts";
import { cpuTimeIt, engineMs, runOnce, timeIt, usPer } from "./measure.ts";
import { keepingFloor, promiseFloor, proposalOf } from "./shapes.ts";
import type { Shape, ToolKind } from "./shapes.ts";

const GOAL_OVERHEAD_US = 10;
const GOAL_BYTES_PER_ACTION = 1_536;
const GOAL_GROWTH = 15;
const GOAL_LANGGRAPH_RATIO = 100;

const shapes: Shape[] = ["fan-out", "chain", "levels"];
const verdict = (ok: boolean): string => (ok ? "meets goal" : "MISSES goal");

/** Runs bench/side.ts in a fresh node process with this process's loader flags and returns its JSON line. */
function side<T>(...args: string[]): T {
  const script = fileURLToPath(new URL("./side.ts", import.meta.url));
  const out = spawnSync(process.execPath, [...process.execArgv, script, ...args], { encoding: "utf8" });
  if (out.status !== 0) throw new Error(`side ${args.join(" ")} failed: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split("\n").at(-1)!) as T;
}

async function overheadTable(kind: ToolKind, n: number): Promise<void> {
  console.log(`\n${kind} tool (${kind === "async" ? "async () => ({ ok: true })" : "() => null"}), ${n} actions, best of 5`);
  console.log("shape     engine µs/action  floor µs/action  overhead µs/action  engine/floor  of which parse  | CPU: engine  parse  (µs/action)");
  for (const shape of shapes) {
    const engine = await engineMs(shape, n, kind, 5);
    const floor = await timeIt(() => promiseFloor(shape, n, kind), 5);
    const proposal = proposalOf(shape, n);
    const parse = await timeIt(async () => parseProposalWithGraph(proposal), 5);
    const engineCpu = await cpuTimeIt(() => runOnce(shape, proposal, kind), 5);
    const parseCpu = await cpuTimeIt(async () => parseProposalWithGraph(proposal), 5);
    const overhead = usPer(engine - floor, n);
    const goal = kind === "async" ? `  ${verdict(overhead <= GOAL_OVERHEAD_US)} (≤ ${GOAL_OVERHEAD_US} µs)` : "";
    console.log(
      `${shape.padEnd(8)}  ${usPer(engine, n).toFixed(2).padStart(16)}  ${usPer(floor, n).toFixed(2).padStart(15)}  ${overhead.toFixed(2).padStart(18)}  ${(engine / floor).toFixed(1).padStart(11)}×  ${usPer(parse, n).toFixed(2).padStart(14)}  | ${usPer(engineCpu, n).toFixed(2).padStart(11)}  ${usPer(parseCpu, n).toFixed(2).padStart(5)}${goal}`,
    );
  }
}

async function main(): Promise<void> {
  for (const kind of ["async", "sync"] as const) for (const shape of shapes) await engineMs(shape, 2_000, kind, 2);
  console.log(
    "Goals: async overhead ≤ 10 µs/action on the 10k shapes; peak ≤ 1.5 KB/action at 100k; growth 10k→100k ≤ 15×; ≥ 100× faster per node than LangGraph.js",
  );

  await overheadTable("async", 10_000);
  await overheadTable("sync", 10_000);

  console.log(
    "\nGrowth, async tool: time at 100k / time at 10k (linear = 10×), fastest of 5 at each size, each run after a full GC;" +
      "\nGC: of which in garbage collection (V8's gc entries); outside GC: the growth of the rest of the run;" +
      "\nbeside it the same growth of the raw-Promise floor and of the floor that also keeps what a finished run must keep (bench/shapes.ts keepingFloor)",
  );
  for (const shape of shapes) {
    // Each size's proposal is built just before its runs, as in engineMs, so the 10k runs do not share the heap with a 100k proposal.
    const growth = async (run: (proposal: ReturnType<typeof proposalOf>) => Promise<unknown>) => {
      let proposal = proposalOf(shape, 10_000);
      const small = await timeWithGc(() => run(proposal), 5);
      proposal = proposalOf(shape, 100_000);
      const large = await timeWithGc(() => run(proposal), 5);
      return { small, large, ratio: large.ms / small.ms, outsideGc: (large.ms - large.gcMs) / (small.ms - small.gcMs) };
    };
    const sizes = (g: Awaited<ReturnType<typeof growth>>): string =>
      `10k ${g.small.ms.toFixed(1)} ms (GC ${g.small.gcMs.toFixed(0)}), 100k ${g.large.ms.toFixed(1)} ms (GC ${g.large.gcMs.toFixed(0)})`;
    const engine = await growth((proposal) => runOnce(shape, proposal, "async"));
    const floor = await growth((proposal) => promiseFloor(shape, proposal.actions.length, "async"));
    const keeping = await growth((proposal) => keepingFloor(shape, proposal, "async"));
    const met = engine.ratio <= GOAL_GROWTH;
    // A slower 10k run lowers a ratio: what the engine adds to the keeping floor, and how that grows, shows its own scaling.
    const above = { small: engine.small.ms - keeping.small.ms, large: engine.large.ms - keeping.large.ms };
    console.log(
      `${shape.padEnd(8)}  ${sizes(engine)}: ${engine.ratio.toFixed(1)}×  ${verdict(met)} (≤ ${GOAL_GROWTH}×), outside GC ${engine.outsideGc.toFixed(1)}×` +
        (met ? "" : engine.ratio <= keeping.ratio ? "  at or under the keeping floor" : "  above the keeping floor") +
        (met || keeping.ratio <= GOAL_GROWTH ? "" : ", which is itself over the goal") +
        `\n          floor ${floor.ratio.toFixed(1)}×; keeping floor ${sizes(keeping)}: ${keeping.ratio.toFixed(1)}×, outside GC ${keeping.outsideGc.toFixed(1)}×` +
        `\n          engine above the keeping floor: ${above.small.toFixed(1)} ms at 10k, ${above.large.toFixed(1)} ms at 100k: ${(above.large / above.small).toFixed(1)}×`,
    );
  }

  const n = 100_000;
  const mem = side<{ heapPeakBytes: number; rssPeakBytes: number; retainedBytes: number; events: number }>("memory", String(n));
  const worst = Math.max(mem.heapPeakBytes, mem.rssPeakBytes) / n;
  console.log(
    `\nMemory, async fan-out of ${n} in its own process: peak heap ${(mem.heapPeakBytes / n).toFixed(0)} B/action, peak RSS ${(mem.rssPeakBytes / n).toFixed(0)} B/action above baseline  ${verdict(worst <= GOAL_BYTES_PER_ACTION)} (≤ 1.5 KB, larger of the two)`,
  );
  console.log(
    `  floor: retained after GC ${(mem.retainedBytes / n).toFixed(0)} B/action — what the finished run must keep: its results, its ${mem.events} events and the parsed proposal that proposal_received records`,
  );

  console.log("\nLangGraph.js vs engine, async nodes, 1k, each side in its own process (best of 5 after warm-up)");
  for (const shape of ["fan-out", "chain"] as const) {
    const lg = side<{ ms: number; cpuMs: number }>("langgraph", shape, "1000");
    const engine = side<{ ms: number; cpuMs: number }>("engine", shape, "1000");
    const ratio = lg.ms / engine.ms;
    console.log(
      `${shape.padEnd(8)}  langgraph ${usPer(lg.ms, 1_000).toFixed(1)} µs/node, engine ${usPer(engine.ms, 1_000).toFixed(2)} µs/action: engine ${ratio.toFixed(0)}× faster (CPU time: ${(lg.cpuMs / engine.cpuMs).toFixed(0)}×)  ${verdict(ratio >= GOAL_LANGGRAPH_RATIO)} (≥ ${GOAL_LANGGRAPH_RATIO}×)`,
    );
  }
}

await main();
