/**
 * The planner loop with a model behind the Vercel AI SDK: each attempt asks
 * the model for a proposal in structured-output mode, constrained by the
 * input-proposal JSON Schema from @car/ir, and hands the runtime whatever it
 * wrote. Verify findings and failed runs from earlier attempts go into the
 * prompt, so the model can correct itself.
 */
import type { ActionProposalInput } from "@car/ir";
import { proposalInputSchema } from "@car/ir";
import type { PlanFeedback, PlanRequest, ProposeFn } from "@car/engine/planner";
import { Output, generateText, jsonSchema } from "ai";
import type { LanguageModel } from "ai";

export const SYSTEM_PROMPT =
  "You plan work for an agent runtime. Answer with one ActionProposal: a DAG of actions that call only the tools listed. " +
  "Use `dependencies` for ordering and `$<id>.output` to pass one action's output to another.";

/** A `ProposeFn` for `runPlanLoop` backed by any AI SDK language model. */
export function aiSdkPlanner(model: LanguageModel): ProposeFn {
  const schema = jsonSchema<ActionProposalInput>(proposalInputSchema);
  return async (request, signal) => {
    const { output } = await generateText({
      model,
      system: SYSTEM_PROMPT,
      prompt: planPrompt(request),
      output: Output.object({ schema, name: "ActionProposal" }),
      ...(signal === undefined ? {} : { abortSignal: signal }),
    });
    return output;
  };
}

/** The task, the tools and what went wrong so far, as the model reads them. */
export function planPrompt(request: PlanRequest): string {
  const tools = request.tools.map((t) => `- ${t.name}: ${t.description || "(no description)"} parameters ${JSON.stringify(t.parameters)}`);
  const lines = [`Task: ${request.task}`, `Attempt ${request.attempt} of ${request.max_attempts}.`, "Tools:", ...tools];
  if (request.feedback.length > 0) lines.push("Earlier attempts failed:", ...request.feedback.map(describe));
  return lines.join("\n");
}

function describe(f: PlanFeedback): string {
  switch (f.verdict) {
    case "verification_failed":
      return `- attempt ${f.attempt}: verify rejected it: ${f.issues.map((i) => i.message).join("; ")}`;
    case "execution_failed":
      return `- attempt ${f.attempt}: it ran and failed: ${f.failures.map((x) => `${x.action_id} ${x.status}${x.error === null ? "" : ` (${x.error})`}`).join("; ")}`;
    default:
      return `- attempt ${f.attempt}: ${f.verdict}: ${f.message}`;
  }
}
