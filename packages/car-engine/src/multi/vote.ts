/**
 * Vote: agents answer independently (at once, within `maxConcurrency`) and
 * the most common answer wins. Answers are counted as equal when they match
 * after trimming, collapsing whitespace and ignoring case. Failed agents do
 * not vote. Tie-break rule: among answers with the top count, the one whose
 * first voter comes earliest in the agent list wins (`tie` is then true).
 * An optional synthesizer sees every answer with its votes and writes the
 * final answer; if it fails, the winner's answer stands.
 */
import type { AgentOutput, AgentSpec } from "@car/ir";
import { MultiRun, parseSpec, parseSpecs, succeeded } from "./multi-run.ts";
import { synthesize } from "./synthesis.ts";
import type { AgentFn, MultiOptions, RunSummary } from "./types.ts";

export interface VoteOptions extends MultiOptions {
  synthesizer?: AgentSpec | null;
}

export interface VoteTally {
  /** The answer as its first voter wrote it. */
  answer: string;
  count: number;
  /** Agent names, in agent order. */
  voters: string[];
}

export interface VoteResult extends RunSummary {
  /** One entry per agent, in order. */
  outputs: AgentOutput[];
  /** Every distinct answer, most votes first; equal counts in order of first voter. */
  tally: VoteTally[];
  /** The winning answer; null when no agent answered. */
  winner: VoteTally | null;
  /** The winner holds more than half of the valid votes. */
  majority: boolean;
  /** Several answers shared the top count and the tie-break rule picked the winner. */
  tie: boolean;
  synthesis: AgentOutput | null;
}

/** Two answers are the same vote when these keys are equal. */
export function voteKey(answer: string): string {
  return answer.trim().replace(/\s+/g, " ").toLowerCase();
}

export async function runVote(agents: readonly AgentSpec[], task: string, agent: AgentFn, options: VoteOptions = {}): Promise<VoteResult> {
  const specs = parseSpecs(agents, "agents");
  const synthesizer = options.synthesizer == null ? undefined : parseSpec(options.synthesizer, "synthesizer");
  const run = new MultiRun("vote", task, agent, options);
  run.start(synthesizer === undefined ? specs : [...specs, synthesizer]);

  const outputs = await Promise.all(specs.map((spec) => run.call(spec, task, "vote")));
  const byKey = new Map<string, VoteTally>();
  let valid = 0;
  for (const out of outputs) {
    if (!succeeded(out)) continue;
    valid++;
    const key = voteKey(out.answer);
    const entry = byKey.get(key);
    if (entry === undefined) byKey.set(key, { answer: out.answer, count: 1, voters: [out.name] });
    else {
      entry.count++;
      entry.voters.push(out.name);
    }
  }
  // Map order is first-voter order, and the sort is stable: that IS the tie-break.
  const tally = [...byKey.values()].sort((a, b) => b.count - a.count);
  const winner = tally[0] ?? null;
  const tie = winner !== null && tally.length > 1 && tally[1]!.count === winner.count;
  const majority = winner !== null && winner.count * 2 > valid;

  const inputs = tally.map((t) => ({ name: `${t.count} vote${t.count === 1 ? "" : "s"}: ${t.voters.join(", ")}`, answer: t.answer }));
  const synthesis = synthesizer === undefined ? null : await synthesize(run, synthesizer, "Answers and their votes", inputs);
  const final_answer = synthesis !== null && succeeded(synthesis) ? synthesis.answer : (winner?.answer ?? null);
  return { ...run.finish(final_answer), outputs, tally, winner, majority, tie, synthesis };
}
