/**
 * Swarm: several agents on one task.
 * - `parallel`: every agent answers independently, at once (within `maxConcurrency`).
 * - `sequential`: agents answer one after another, each seeing the answers so far.
 * - `debate`: `rounds` rounds; in round 1 every agent answers independently, in
 *   each later round every agent sees the other agents' answers from the
 *   previous round and may revise its own.
 * An optional synthesizer combines the final answers.
 */
import { CarError } from "@car/ir";
import type { AgentOutput, AgentSpec } from "@car/ir";
import { answersOf, labelled, withAnswers } from "./compose.ts";
import { MultiRun, parseSpec, parseSpecs, succeeded } from "./multi-run.ts";
import { synthesize } from "./synthesis.ts";
import type { AgentFn, MultiOptions, RunSummary } from "./types.ts";

export type SwarmMode = "parallel" | "sequential" | "debate";

export const SWARM_MODES: readonly SwarmMode[] = ["parallel", "sequential", "debate"];

export const DEFAULT_DEBATE_ROUNDS = 2;

export interface SwarmOptions extends MultiOptions {
  /** Combines the final answers into `final_answer`. */
  synthesizer?: AgentSpec | null;
  /** Debate only: how many rounds (default 2). */
  rounds?: number;
}

export interface SwarmResult extends RunSummary {
  mode: SwarmMode;
  /** One entry per agent, in order: its answer in the last round. */
  outputs: AgentOutput[];
  /** Every round's entries (one round for `parallel` and `sequential`). */
  rounds: AgentOutput[][];
  /** The synthesizer's entry, or null when none was given. */
  synthesis: AgentOutput | null;
}

/**
 * `final_answer` is the synthesizer's answer; without one (or when it fails),
 * the last answer for `sequential` (it saw all the others) and every answer,
 * labelled by agent, for `parallel` and `debate`; null when no agent answered.
 */
export async function runSwarm(mode: SwarmMode, agents: readonly AgentSpec[], task: string, agent: AgentFn, options: SwarmOptions = {}): Promise<SwarmResult> {
  if ((mode as string) === "hybrid") {
    // Named by the reference's WebSocket page but defined nowhere (the seed's modes are these three): refused rather than guessed.
    throw new CarError(
      "invalid_params",
      `swarm mode 'hybrid' is not supported: no source defines what it does; use 'debate' (agents answer, then revise seeing each other's answers), 'parallel' or 'sequential'`,
    );
  }
  if (!SWARM_MODES.includes(mode)) throw new CarError("invalid_params", `unknown swarm mode '${String(mode)}' (expected ${SWARM_MODES.join(", ")})`);
  const specs = parseSpecs(agents, "agents");
  const synthesizer = options.synthesizer == null ? undefined : parseSpec(options.synthesizer, "synthesizer");
  const roundCount = debateRounds(mode, options.rounds);
  const run = new MultiRun(`swarm:${mode}`, task, agent, options);
  run.start(synthesizer === undefined ? specs : [...specs, synthesizer], mode === "debate" ? { mode, rounds: roundCount } : { mode });

  const rounds: AgentOutput[][] = [];
  if (mode === "sequential") {
    const outputs: AgentOutput[] = [];
    for (const spec of specs) {
      const inputs = answersOf(outputs);
      outputs.push(await run.call(spec, withAnswers(task, "Answers so far", inputs), "sequential", inputs));
    }
    rounds.push(outputs);
  } else {
    rounds.push(await Promise.all(specs.map((spec) => run.call(spec, task, "round 1"))));
    for (let r = 2; r <= roundCount; r++) {
      const previous = rounds[rounds.length - 1]!;
      const round = specs.map((spec, i) => {
        const inputs = answersOf(previous.filter((_, j) => j !== i));
        return run.call(spec, withAnswers(task, `The other agents' answers in round ${r - 1}`, inputs), `round ${r}`, inputs);
      });
      rounds.push(await Promise.all(round));
    }
  }

  const outputs = rounds[rounds.length - 1]!;
  const answers = answersOf(outputs);
  const synthesis = synthesizer === undefined ? null : await synthesize(run, synthesizer, "Answers to synthesise", answers);
  let final_answer: string | null;
  if (synthesis !== null && succeeded(synthesis)) final_answer = synthesis.answer;
  else if (answers.length === 0) final_answer = null;
  else final_answer = mode === "sequential" ? answers[answers.length - 1]!.answer : labelled(answers);
  return { ...run.finish(final_answer), mode, outputs, rounds, synthesis };
}

function debateRounds(mode: SwarmMode, rounds: number | undefined): number {
  if (rounds === undefined) return mode === "debate" ? DEFAULT_DEBATE_ROUNDS : 1;
  if (mode !== "debate") throw new CarError("invalid_params", `rounds applies to the debate mode only, not '${mode}'`);
  if (!Number.isInteger(rounds) || rounds < 1) throw new CarError("invalid_params", `rounds must be a positive integer, got ${String(rounds)}`);
  return rounds;
}
