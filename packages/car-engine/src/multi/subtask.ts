/**
 * Subtask: a main agent that may spawn short-lived sub-agents, each granted
 * a subset of the main agent's own tools (`main.tools`).
 *
 * The main agent works in turns (at most `main.max_turns`). Each turn it
 * receives the task, the `spawn_subtask` tool's schema and every subtask
 * result so far, and answers JSON:
 *   {"spawn_subtask": [{"task": "...", "tools": ["..."], "system_prompt": "..."}]}
 *   {"final_answer": "..."}
 * (an answer that is neither is its final answer). The spawns of one turn
 * become one proposal of `spawn_subtask` tool calls with no dependencies,
 * run by the engine's own runtime: its static gate checks each call against
 * the tool's schema, whose `tools` items are an `enum` of the main agent's
 * tools — so a grant outside the subset is rejected before anything runs —
 * and its DAG executor runs the calls of the turn at once. The tool's
 * handler checks the subset again before it starts the sub-agent. The run's
 * budget counts the main agent and every sub-agent alike, so `max_agents`
 * and the token ceilings also cap how many sub-agents may be spawned.
 */
import { CarError, getOwn, isCarError, isJsonObject } from "@car/ir";
import type { AgentOutput, AgentSpec, JsonObject, JsonValue, ToolSchemaInput } from "@car/ir";
import type { AdmissionGuard } from "../run/admission-guard.ts";
import { Runtime } from "../runtime.ts";
import { answersOf, labelled } from "./compose.ts";
import { MultiRun, parseSpec, succeeded } from "./multi-run.ts";
import type { AgentFn, MultiOptions, RunSummary } from "./types.ts";

export const SPAWN_SUBTASK_TOOL = "spawn_subtask";

export interface SubtaskRecord {
  /** The spawn's action id in its turn's proposal (`sub-<n>`, numbered across the run). */
  id: string;
  turn: number;
  task: string;
  /** The tools the main agent asked to grant. */
  tools: JsonValue;
  /** `rejected`: the grant failed the tool's schema (or the re-check) and no sub-agent ran. */
  status: "succeeded" | "failed" | "rejected";
  /** The sub-agent's entry; null when it was not started. */
  output: AgentOutput | null;
  error: string | null;
}

export interface SubtaskResult extends RunSummary {
  /** The main agent's entry for each turn. */
  turns: AgentOutput[];
  subtasks: SubtaskRecord[];
  /** True when the main agent gave the final answer (not the fallback). */
  completed: boolean;
}

export interface SubtaskOptions extends MultiOptions {
  /**
   * The host's admission guard, given every turn's proposal of spawns as it
   * is given any other proposal (a server's action limit and slots).
   */
  admission?: AdmissionGuard;
}

/** The `spawn_subtask` tool offered to `main`: its `tools` parameter is an enum of main's own tools. */
export function spawnSubtaskSchema(main: AgentSpec): ToolSchemaInput {
  const grantable = [...new Set(main.tools)].filter((t) => t !== SPAWN_SUBTASK_TOOL);
  const items: JsonObject = grantable.length === 0 ? { type: "string" } : { type: "string", enum: grantable };
  return {
    name: SPAWN_SUBTASK_TOOL,
    description: "Run a sub-agent on a subtask with a subset of your own tools; returns its answer.",
    parameters: {
      type: "object",
      required: ["task", "tools"],
      additionalProperties: false,
      properties: {
        task: { type: "string", minLength: 1 },
        tools: { type: "array", uniqueItems: true, items, ...(grantable.length === 0 ? { maxItems: 0 } : {}) },
        system_prompt: { type: "string" },
      },
    },
  };
}

/** The grant as a list of the main agent's tools; anything else is `policy_denied`. */
export function checkGrant(grant: unknown, main: AgentSpec): string[] {
  const allowed = new Set(main.tools);
  if (!Array.isArray(grant) || grant.some((t) => typeof t !== "string" || !allowed.has(t) || t === SPAWN_SUBTASK_TOOL)) {
    throw new CarError("policy_denied", `spawn_subtask may grant only the main agent's tools (${[...allowed].join(", ")})`);
  }
  return [...new Set(grant as string[])];
}

export async function runSubtask(main: AgentSpec, task: string, agent: AgentFn, options: SubtaskOptions = {}): Promise<SubtaskResult> {
  const mainSpec = parseSpec(main, "main");
  const run = new MultiRun("subtask", task, agent, options);
  const schema = spawnSubtaskSchema(mainSpec);
  const rt = options.runtime;
  const clock = options.clock ?? rt?.clock;
  const timers = options.timers ?? rt?.timers;
  // A private runtime: the spawns are this run's own actions, audited as agent calls on the run's log.
  const executor = new Runtime({
    ...(clock === undefined ? {} : { clock }),
    ...(timers === undefined ? {} : { timers }),
    ...(options.admission === undefined ? {} : { admission: options.admission }),
  });
  let spawned = 0;
  let currentTurn = 0;
  const outputs = new Map<string, AgentOutput>();
  executor.registerTool(schema, async (params, ctx) => {
    // Defense in depth: the gate already held the grant to the enum.
    const grant = checkGrant(params["tools"], mainSpec);
    const prompt = getOwn(params, "system_prompt");
    const sub: AgentSpec = {
      name: `${mainSpec.name}/${ctx.action_id}`,
      system_prompt: typeof prompt === "string" ? prompt : `You are a sub-agent of ${mainSpec.name}. Use only the tools you were granted.`,
      tools: grant,
      max_turns: mainSpec.max_turns,
      metadata: { ...mainSpec.metadata, parent: mainSpec.name },
    };
    const output = await run.call(sub, params["task"] as string, `turn ${currentTurn} ${ctx.action_id}`);
    outputs.set(ctx.action_id, output);
    // A failed sub-agent is its record's failure, not the tool's: throwing would abort its siblings in flight.
    return { answer: output.answer, error: output.error };
  });

  run.start([mainSpec], { max_turns: mainSpec.max_turns, tools: mainSpec.tools });
  const turns: AgentOutput[] = [];
  const subtasks: SubtaskRecord[] = [];
  let final_answer: string | null = null;
  let completed = false;
  try {
    for (let turn = 1; turn <= mainSpec.max_turns; turn++) {
      currentTurn = turn;
      const last = turn === mainSpec.max_turns;
      const inputs = subtasks.filter((s) => s.output !== null && succeeded(s.output)).map((s) => ({ name: s.id, answer: s.output!.answer }));
      const entry = await run.call(mainSpec, briefing(task, schema, subtasks, last), `main turn ${turn}`, inputs, last ? [] : [schema]);
      turns.push(entry);
      if (!succeeded(entry)) break;
      const decision = readMainAnswer(entry.answer);
      if (decision.kind !== "spawn") {
        final_answer = decision.kind === "final" ? decision.answer : entry.answer;
        completed = true;
        break;
      }
      // A spawn on the last turn is no answer: the sub-agents' answers stand in below.
      if (last) break;
      const actions = decision.calls.map((parameters) => ({ id: `sub-${++spawned}`, type: "tool_call", tool: SPAWN_SUBTASK_TOOL, parameters }));
      let errors: (string | null)[];
      try {
        const result = await executor.executeProposal({ id: `${run.run_id}-turn-${turn}`, actions } as never);
        errors = result.results.map((r) => r.error);
      } catch (error) {
        // The host's admission guard (or the parser) refused the whole turn: no spawn of it ran.
        if (!isCarError(error)) throw error;
        errors = actions.map(() => error.message);
      }
      for (const [i, action] of actions.entries()) {
        const parameters = decision.calls[i]!;
        const output = outputs.get(action.id) ?? null;
        const status = output === null ? "rejected" : succeeded(output) ? "succeeded" : "failed";
        const taskText = getOwn(parameters, "task");
        subtasks.push({
          id: action.id,
          turn,
          task: typeof taskText === "string" ? taskText : "",
          tools: getOwn(parameters, "tools") ?? null,
          status,
          output,
          error: status === "succeeded" ? null : (output?.error ?? errors[i] ?? "not run"),
        });
      }
      if (run.stopped) break;
    }
  } finally {
    await executor.close();
  }
  if (!completed) {
    const answers = answersOf(subtasks.flatMap((s) => (s.output === null ? [] : [s.output])));
    final_answer = answers.length === 0 ? null : labelled(answers);
  }
  return { ...run.finish(final_answer), turns, subtasks, completed };
}

type MainDecision = { kind: "spawn"; calls: JsonObject[] } | { kind: "final"; answer: string } | { kind: "unstructured" };

/** The main agent's answer: a JSON object (whole, fenced, or from the first `{` to the last `}`) naming its decision. */
export function readMainAnswer(answer: string): MainDecision {
  const candidates = [answer.trim()];
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/i.exec(answer);
  if (fenced !== null) candidates.push(fenced[1]!.trim());
  const first = answer.indexOf("{");
  const lastBrace = answer.lastIndexOf("}");
  if (first !== -1 && lastBrace > first) candidates.push(answer.slice(first, lastBrace + 1));
  for (const text of candidates) {
    let value: JsonValue;
    try {
      value = JSON.parse(text) as JsonValue;
    } catch {
      continue;
    }
    if (!isJsonObject(value)) continue;
    const final = getOwn(value, "final_answer");
    if (typeof final === "string") return { kind: "final", answer: final };
    const spawn = getOwn(value, SPAWN_SUBTASK_TOOL);
    const list = isJsonObject(spawn ?? null) ? [spawn as JsonObject] : spawn;
    // Each call's parameters go to the gate as written: a malformed one is rejected there, with its reason.
    if (Array.isArray(list) && list.length > 0 && list.every((c) => isJsonObject(c))) return { kind: "spawn", calls: list as JsonObject[] };
  }
  return { kind: "unstructured" };
}

function briefing(task: string, schema: ToolSchemaInput, subtasks: readonly SubtaskRecord[], last: boolean): string {
  const lines = [task, ""];
  if (last) lines.push('This is your last turn. Reply with JSON only: {"final_answer": "<your answer to the task>"}');
  else {
    lines.push(
      `You may hand subtasks to sub-agents with the ${SPAWN_SUBTASK_TOOL} tool:`,
      JSON.stringify(schema),
      "Reply with JSON only, either",
      `  {"${SPAWN_SUBTASK_TOOL}": [{"task": "<subtask>", "tools": ["<one of your tools>"]}]} (the subtasks run at once), or`,
      '  {"final_answer": "<your answer to the task>"} when you can answer.',
    );
  }
  if (subtasks.length > 0) {
    lines.push("", "Subtask results so far:");
    for (const s of subtasks) {
      const body = s.status === "succeeded" ? s.output!.answer : `(${s.status}: ${s.error ?? ""})`;
      lines.push("", `[${s.id}] task: ${s.task}`, body);
    }
  }
  return lines.join("\n");
}
