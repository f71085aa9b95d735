/**
 * Multi-agent coordination overhead: the runtime's share of a run (slots,
 * strict output validation, events, timeout timers) against the floor of
 * calling the same no-op agents directly with Promise.all, in one run.
 * Run with `npx tsx --conditions=source bench/multi.ts`.
 */
import type { AgentOutput, AgentSpec } from "@car/ir";
import { runPipeline, runSwarm } from "../src/multi/index.ts";

const specs = (n: number): AgentSpec[] => Array.from({ length: n }, (_, i) => ({ name: `a${i}`, system_prompt: "", tools: [], max_turns: 1, metadata: {} }));
const agent = async (spec: AgentSpec): Promise<AgentOutput> => ({ name: spec.name, answer: "ok", turns: 1, tool_calls: 0, duration_ms: 0, error: null });

async function best(fn: () => Promise<unknown>, repeats = 5): Promise<number> {
  let min = Infinity;
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    await fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

const us = (ms: number, n: number): string => ((ms * 1000) / n).toFixed(2);

async function main(): Promise<void> {
  const n = 10_000;
  const agents = specs(n);
  await runSwarm("parallel", agents.slice(0, 1_000), "t", agent);

  const floor = await best(() => Promise.all(agents.map((s) => agent(s))));
  const parallel = await best(() => runSwarm("parallel", agents, "t", agent));
  const limited = await best(() => runSwarm("parallel", agents, "t", agent, { maxConcurrency: 8, agentTimeoutMs: 60_000 }));
  const chain = await best(() => runPipeline(agents.slice(0, 2_000), "t", agent), 3);
  const chainFloor = await best(async () => {
    for (const s of agents.slice(0, 2_000)) await agent(s);
  }, 3);

  console.log("run                                   agents  µs/agent  floor µs/agent  ratio");
  const row = (label: string, ms: number, floorMs: number, count: number): void =>
    console.log(
      `${label.padEnd(37)} ${String(count).padStart(6)}  ${us(ms, count).padStart(8)}  ${us(floorMs, count).padStart(14)}  ${(ms / floorMs).toFixed(1)}×`,
    );
  row("swarm parallel, no limits", parallel, floor, n);
  row("swarm parallel, 8 slots + timeouts", limited, floor, n);
  row("pipeline (each stage sees the last)", chain, chainFloor, 2_000);
}

await main();
