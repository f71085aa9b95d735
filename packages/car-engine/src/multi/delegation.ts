/**
 * The supervisor protocol: how a supervisor's answer names its decision.
 *
 * The answer carries one JSON object — the whole answer, a fenced ```json
 * block, or the text from its first `{` to its last `}` — of one of two forms:
 *   {"delegate": [{"worker": "<worker name>", "task": "<subtask>"}, ...]}
 *   {"final_answer": "<the answer to the task>"}
 * (`final_answer` wins when both appear). Anything else is unstructured:
 * the supervisor runner decides what that means (see supervisor.ts).
 */
import { getOwn, isJsonObject } from "@car/ir";
import type { JsonValue } from "@car/ir";

export interface Delegation {
  worker: string;
  task: string;
}

export type SupervisorDecision = { kind: "delegate"; delegations: Delegation[] } | { kind: "final"; answer: string } | { kind: "unstructured"; text: string };

export function readSupervisorAnswer(answer: string): SupervisorDecision {
  for (const candidate of jsonCandidates(answer)) {
    let value: JsonValue;
    try {
      value = JSON.parse(candidate) as JsonValue;
    } catch {
      continue;
    }
    const decision = decisionOf(value);
    if (decision !== undefined) return decision;
  }
  return { kind: "unstructured", text: answer };
}

function* jsonCandidates(answer: string): Generator<string> {
  const trimmed = answer.trim();
  yield trimmed;
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/i.exec(answer);
  if (fenced !== null) yield fenced[1]!.trim();
  const first = answer.indexOf("{");
  const last = answer.lastIndexOf("}");
  if (first !== -1 && last > first) yield answer.slice(first, last + 1);
}

function decisionOf(value: JsonValue): SupervisorDecision | undefined {
  if (!isJsonObject(value)) return undefined;
  const final = getOwn(value, "final_answer");
  if (typeof final === "string") return { kind: "final", answer: final };
  const list = getOwn(value, "delegate");
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const delegations: Delegation[] = [];
  for (const item of list) {
    if (!isJsonObject(item)) return undefined;
    const worker = getOwn(item, "worker");
    const task = getOwn(item, "task");
    if (typeof worker !== "string" || typeof task !== "string") return undefined;
    delegations.push({ worker, task });
  }
  return { kind: "delegate", delegations };
}
