/**
 * Supervisor: a supervisor agent splits the task among workers over rounds
 * and writes the final answer (the protocol is in delegation.ts).
 *
 * Each round the supervisor receives the task, the workers' names and
 * system prompts, the protocol, and every worker result so far. Then:
 * - `final_answer` ends the run with that answer;
 * - `delegate` runs the named workers on their subtasks (at once, within
 *   `maxConcurrency`); a name that is no worker becomes an error entry;
 * - an unstructured answer in round 1 (nothing delegated yet) falls back to
 *   giving the whole task to every worker; in a later round it is taken as
 *   the final answer.
 * After `max_rounds` delegation rounds the supervisor is asked once more,
 * for the final answer only. If it fails, or never gives one, the final
 * answer falls back to the latest workers' answers, labelled.
 */
import { CarError } from "@car/ir";
import type { AgentOutput, AgentSpec } from "@car/ir";
import { answersOf, labelled } from "./compose.ts";
import { readSupervisorAnswer } from "./delegation.ts";
import type { Delegation } from "./delegation.ts";
import { MultiRun, errorEntry, parseSpec, parseSpecs, succeeded } from "./multi-run.ts";
import type { AgentFn, AgentInput, MultiOptions, RunSummary } from "./types.ts";

export const DEFAULT_SUPERVISOR_ROUNDS = 3;

export interface SupervisorOptions extends MultiOptions {
  /** Delegation rounds before the supervisor must answer (default 3; 0 = it answers alone). */
  max_rounds?: number;
}

export interface DelegationEntry {
  worker: string;
  task: string;
  output: AgentOutput;
}

export interface SupervisorRound {
  round: number;
  supervisor: AgentOutput;
  /** What the runtime made of the supervisor's answer. */
  decision: "delegate" | "fan_out" | "final" | "failed";
  delegations: DelegationEntry[];
}

export interface SupervisorResult extends RunSummary {
  rounds: SupervisorRound[];
  /** True when the supervisor itself gave the final answer (not the fallback). */
  completed: boolean;
}

export async function runSupervisor(
  workers: readonly AgentSpec[],
  supervisor: AgentSpec,
  task: string,
  agent: AgentFn,
  options: SupervisorOptions = {},
): Promise<SupervisorResult> {
  const workerSpecs = parseSpecs(workers, "workers");
  const supervisorSpec = parseSpec(supervisor, "supervisor");
  const byName = new Map<string, AgentSpec>();
  for (const w of workerSpecs) {
    if (byName.has(w.name)) throw new CarError("invalid_params", `two workers are named '${w.name}': the supervisor names workers, so names must be unique`);
    byName.set(w.name, w);
  }
  const maxRounds = options.max_rounds ?? DEFAULT_SUPERVISOR_ROUNDS;
  if (!Number.isInteger(maxRounds) || maxRounds < 0)
    throw new CarError("invalid_params", `max_rounds must be a non-negative integer, got ${String(maxRounds)}`);

  const run = new MultiRun("supervisor", task, agent, options);
  run.start([supervisorSpec, ...workerSpecs], { max_rounds: maxRounds });
  const rounds: SupervisorRound[] = [];
  const results: DelegationEntry[] = [];
  let latest: AgentOutput[] = [];
  let final_answer: string | null = null;
  let completed = false;

  for (let round = 1; round <= maxRounds + 1; round++) {
    const last = round > maxRounds;
    const inputs: AgentInput[] = results.filter((r) => succeeded(r.output)).map((r) => ({ name: r.worker, answer: r.output.answer }));
    const entry = await run.call(supervisorSpec, briefing(task, workerSpecs, results, last), `supervisor round ${round}`, inputs);
    if (!succeeded(entry)) {
      rounds.push({ round, supervisor: entry, decision: "failed", delegations: [] });
      break;
    }
    const decision = readSupervisorAnswer(entry.answer);
    if (decision.kind === "final" || (decision.kind === "unstructured" && (last || results.length > 0))) {
      rounds.push({ round, supervisor: entry, decision: "final", delegations: [] });
      final_answer = decision.kind === "final" ? decision.answer : decision.text;
      completed = true;
      break;
    }
    if (last) {
      // A delegation when none is allowed: the answer is not a final one.
      rounds.push({ round, supervisor: entry, decision: "failed", delegations: [] });
      break;
    }
    const fanOut = decision.kind === "unstructured";
    const wanted: Delegation[] = fanOut ? workerSpecs.map((w) => ({ worker: w.name, task })) : decision.delegations;
    const delegations = await Promise.all(
      wanted.map(async (d): Promise<DelegationEntry> => {
        const spec = byName.get(d.worker);
        const output =
          spec === undefined
            ? errorEntry(d.worker, `the supervisor delegated to '${d.worker}', which is not a worker`, 0)
            : await run.call(spec, d.task, `round ${round}`);
        return { worker: d.worker, task: d.task, output };
      }),
    );
    rounds.push({ round, supervisor: entry, decision: fanOut ? "fan_out" : "delegate", delegations });
    results.push(...delegations);
    latest = delegations.map((d) => d.output);
    if (run.stopped) break;
  }

  if (!completed) {
    const answers = answersOf(latest);
    final_answer = answers.length === 0 ? null : labelled(answers);
  }
  return { ...run.finish(final_answer), rounds, completed };
}

/** The task text the supervisor receives each round. */
function briefing(task: string, workers: readonly AgentSpec[], results: readonly DelegationEntry[], last: boolean): string {
  const lines = [task, "", "Workers:"];
  for (const w of workers) lines.push(`- ${w.name}: ${w.system_prompt}`);
  lines.push("");
  if (last) {
    lines.push('No delegation rounds are left. Reply with JSON only: {"final_answer": "<your answer to the task>"}');
  } else {
    lines.push(
      "Reply with JSON only, either",
      '  {"delegate": [{"worker": "<worker name>", "task": "<subtask>"}]} to give workers subtasks, or',
      '  {"final_answer": "<your answer to the task>"} when you can answer.',
    );
  }
  if (results.length > 0) {
    lines.push("", "Worker results so far:");
    for (const r of results) {
      lines.push("", `[${r.worker}] task: ${r.task}`, succeeded(r.output) ? r.output.answer : `(failed: ${r.output.error ?? ""})`);
    }
  }
  return lines.join("\n");
}
