/**
 * How the runtime writes the task text an agent receives when that task is
 * built from other agents' answers. One format everywhere, documented in the
 * README, so a callback that prefers its own prompt can rebuild it from
 * `ctx.original_task` and `ctx.inputs` instead.
 */
import type { AgentOutput } from "@car/ir";
import type { AgentInput } from "./types.ts";

/** The successful answers among `outputs`, as inputs for a later agent. */
export function answersOf(outputs: readonly AgentOutput[]): AgentInput[] {
  return outputs.filter((o) => o.error === null).map((o) => ({ name: o.name, answer: o.answer }));
}

/**
 * `task`, a blank line, then a heading and one `[name]` block per answer.
 * With no answers the task is returned unchanged.
 */
export function withAnswers(task: string, heading: string, inputs: readonly AgentInput[]): string {
  if (inputs.length === 0) return task;
  return `${task}\n\n${heading}:\n${labelled(inputs)}`;
}

/** One `[name] answer` block per input, separated by blank lines. */
export function labelled(inputs: readonly AgentInput[]): string {
  return inputs.map((i) => `[${i.name}]\n${i.answer}`).join("\n\n");
}
