/**
 * The optional last step several patterns share: one agent combines the
 * answers into the final one. A synthesizer that fails (or is refused by the
 * budget) does not fail the run — the caller falls back to its own answer.
 */
import type { AgentOutput, AgentSpec } from "@car/ir";
import { withAnswers } from "./compose.ts";
import type { MultiRun } from "./multi-run.ts";
import type { AgentInput } from "./types.ts";

/** Runs the synthesizer over `inputs`; skipped (`upstream_failed`) when there is nothing to combine. */
export async function synthesize(
  run: MultiRun,
  spec: AgentSpec,
  heading: string,
  inputs: readonly AgentInput[],
  task: string = run.task,
): Promise<AgentOutput> {
  if (inputs.length === 0) return run.skip(spec, "synthesize", "upstream_failed", "no agent produced an answer to synthesise");
  return run.call(spec, withAnswers(task, heading, inputs), "synthesize", inputs);
}
