/**
 * Pipeline: stages run one after another and each stage's answer feeds the
 * next. A stage that fails ends the pipeline: the later stages are reported
 * as cut off (`upstream_failed`) rather than fed an answer that does not exist.
 */
import type { AgentOutput, AgentSpec } from "@car/ir";
import { withAnswers } from "./compose.ts";
import { MultiRun, parseSpecs, succeeded } from "./multi-run.ts";
import type { AgentFn, MultiOptions, RunSummary } from "./types.ts";

export interface PipelineResult extends RunSummary {
  /** One entry per stage, in order; stages that did not run carry a `not started` error. */
  stages: AgentOutput[];
  /** True when every stage produced an answer; `final_answer` is then the last stage's. */
  completed: boolean;
}

export async function runPipeline(stages: readonly AgentSpec[], task: string, agent: AgentFn, options: MultiOptions = {}): Promise<PipelineResult> {
  const specs = parseSpecs(stages, "stages");
  const run = new MultiRun("pipeline", task, agent, options);
  run.start(specs);
  const outputs: AgentOutput[] = [];
  let previous: AgentOutput | undefined;
  let broken: string | undefined;
  for (const [i, spec] of specs.entries()) {
    const step = `stage ${i + 1}`;
    if (broken !== undefined) {
      outputs.push(run.skip(spec, step, "upstream_failed", broken));
      continue;
    }
    const inputs = previous === undefined ? [] : [{ name: previous.name, answer: previous.answer }];
    previous = await run.call(spec, withAnswers(task, "Output of the previous stage", inputs), step, inputs);
    outputs.push(previous);
    if (!succeeded(previous)) broken = `${step} (${spec.name}) did not produce an answer`;
  }
  const completed = outputs.length > 0 && outputs.every(succeeded);
  const final_answer = completed ? outputs[outputs.length - 1]!.answer : null;
  return { ...run.finish(final_answer), stages: outputs, completed };
}
