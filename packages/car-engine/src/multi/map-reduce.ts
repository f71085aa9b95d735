/**
 * Map-reduce: the mapper agent runs once per item (at once, within
 * `maxConcurrency`), then the reducer combines the mappers' answers. A failed
 * item is left out of the reduction and listed in the reducer's task as
 * failed, so the reducer knows the answer is partial.
 */
import { CarError } from "@car/ir";
import type { AgentOutput, AgentSpec } from "@car/ir";
import { labelled } from "./compose.ts";
import { MultiRun, parseSpec, succeeded } from "./multi-run.ts";
import type { AgentFn, AgentInput, MultiOptions, RunSummary } from "./types.ts";

export interface MapReduceResult extends RunSummary {
  /** One mapper entry per item, in item order. */
  map: AgentOutput[];
  /** The reducer's entry. */
  reduce: AgentOutput;
}

/**
 * The mapper's task for item i is `task`, a blank line, `Item i of n:` and the
 * item. The reducer's task is `task` followed by the mapper answers labelled
 * `item i`. `final_answer` is the reducer's answer; if the reducer fails, the
 * labelled mapper answers; null when no item was mapped.
 */
export async function runMapReduce(
  mapper: AgentSpec,
  reducer: AgentSpec,
  task: string,
  items: readonly string[],
  agent: AgentFn,
  options: MultiOptions = {},
): Promise<MapReduceResult> {
  const mapSpec = parseSpec(mapper, "mapper");
  const reduceSpec = parseSpec(reducer, "reducer");
  if (!Array.isArray(items) || !items.every((i) => typeof i === "string")) throw new CarError("invalid_params", "items must be an array of strings");
  const run = new MultiRun("map_reduce", task, agent, options);
  run.start([mapSpec, reduceSpec], { items: items.length });

  const n = items.length;
  const map = await Promise.all(items.map((item, i) => run.call(mapSpec, `${task}\n\nItem ${i + 1} of ${n}:\n${item}`, `map ${i + 1}`)));
  const inputs: AgentInput[] = [];
  const failed: number[] = [];
  map.forEach((out, i) => {
    if (succeeded(out)) inputs.push({ name: `item ${i + 1}`, answer: out.answer });
    else failed.push(i + 1);
  });

  // Built once: the reducer's task and, should the reducer fail, the final answer (each up to tens of MiB).
  const mapped = inputs.length === 0 ? null : labelled(inputs);
  let reduce: AgentOutput;
  if (mapped === null) {
    reduce = run.skip(reduceSpec, "reduce", "upstream_failed", n === 0 ? "there are no items to reduce" : "no item was mapped");
  } else {
    const missing = failed.length === 0 ? "" : `\n\nItems that could not be mapped: ${failed.join(", ")}`;
    reduce = await run.call(reduceSpec, `${task}\n\nMapped items:\n${mapped}${missing}`, "reduce", inputs);
  }
  const final_answer = succeeded(reduce) ? reduce.answer : mapped;
  return { ...run.finish(final_answer), map, reduce };
}
