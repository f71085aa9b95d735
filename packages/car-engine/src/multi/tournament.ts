/**
 * Tournament: every competitor answers the task once (at once, within
 * `maxConcurrency`), then a judge compares the answers two at a time in a
 * single-elimination bracket until one remains.
 *
 * The bracket, in competitor order: each round pairs the entrants 1–2, 3–4,
 * …; an odd one out (the last) gets a bye into the next round. Every match
 * is a separate call of the judge spec — a fresh judge that sees only the
 * task and the two answers, labelled A (the earlier competitor) and B — and
 * the matches of one round run at once. The judge names the better answer
 * (see `readVerdict`). A judge that fails, is refused by the budget, or
 * names neither is no verdict: the earlier competitor advances and the
 * match says `decided_by: "fallback"`, so the run still ends with a winner.
 *
 * A competitor whose own answer failed does not enter the bracket. `ranking`
 * is best to worst: the winner, then the losers of the final, of the round
 * before, and so on (competitor order within a round), then the competitors
 * that produced no answer.
 */
import { CarError } from "@car/ir";
import type { AgentOutput, AgentSpec } from "@car/ir";
import { MultiRun, parseSpec, parseSpecs, succeeded } from "./multi-run.ts";
import type { AgentFn, MultiOptions, RunSummary } from "./types.ts";

export interface MatchResult {
  /** 1 for the first bracket round. */
  round: number;
  /** The competitor shown as answer A (the earlier one). */
  a: string;
  b: string;
  winner: string;
  loser: string;
  /** `judge`: the judge named the winner; `fallback`: it did not, and A advanced. */
  decided_by: "judge" | "fallback";
  /** The judge's entry for this match. */
  judge: AgentOutput;
}

export interface Bye {
  round: number;
  name: string;
}

export interface TournamentResult extends RunSummary {
  /** One entry per competitor, in order: its answer to the task. */
  candidates: AgentOutput[];
  /** Every match, in bracket order. */
  matches: MatchResult[];
  byes: Bye[];
  /** Null when no competitor produced an answer. */
  winner_name: string | null;
  winner_answer: string | null;
  /** Competitor names, best to worst. */
  ranking: string[];
}

export async function runTournament(
  competitors: readonly AgentSpec[],
  judge: AgentSpec,
  task: string,
  agent: AgentFn,
  options: MultiOptions = {},
): Promise<TournamentResult> {
  const specs = parseSpecs(competitors, "competitors");
  const judgeSpec = parseSpec(judge, "judge");
  if (specs.length === 0) throw new CarError("invalid_params", "a tournament needs at least one competitor");
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.name)) throw new CarError("invalid_params", `two competitors are named '${s.name}': the ranking names competitors, so names must be unique`);
    seen.add(s.name);
  }
  const run = new MultiRun("tournament", task, agent, options);
  run.start([...specs, judgeSpec], { competitors: specs.length });

  const candidates = await Promise.all(specs.map((spec) => run.call(spec, task, "candidate")));
  const answerOf = new Map(candidates.filter(succeeded).map((c) => [c.name, c.answer]));
  let entrants = specs.map((s) => s.name).filter((n) => answerOf.has(n));
  const matches: MatchResult[] = [];
  const byes: Bye[] = [];
  /** Losers per round, in competitor order. */
  const eliminated: string[][] = [];

  for (let round = 1; entrants.length > 1; round++) {
    const pairs: [string, string][] = [];
    for (let i = 0; i + 1 < entrants.length; i += 2) pairs.push([entrants[i]!, entrants[i + 1]!]);
    const bye = entrants.length % 2 === 1 ? entrants[entrants.length - 1]! : undefined;
    const played = await Promise.all(pairs.map(([a, b], m) => playMatch(run, judgeSpec, task, round, m + 1, a, answerOf.get(a)!, b, answerOf.get(b)!)));
    matches.push(...played);
    eliminated.push(played.map((p) => p.loser));
    entrants = played.map((p) => p.winner);
    if (bye !== undefined) {
      byes.push({ round, name: bye });
      entrants.push(bye);
    }
  }

  const winner_name = entrants[0] ?? null;
  const winner_answer = winner_name === null ? null : answerOf.get(winner_name)!;
  const ranking = [...(winner_name === null ? [] : [winner_name]), ...eliminated.reverse().flat(), ...specs.map((s) => s.name).filter((n) => !answerOf.has(n))];
  return { ...run.finish(winner_answer), candidates, matches, byes, winner_name, winner_answer, ranking };
}

async function playMatch(
  run: MultiRun,
  judge: AgentSpec,
  task: string,
  round: number,
  match: number,
  a: string,
  answerA: string,
  b: string,
  answerB: string,
): Promise<MatchResult> {
  const inputs = [
    { name: "A", answer: answerA },
    { name: "B", answer: answerB },
  ];
  const entry = await run.call(judge, judgeTask(task, answerA, answerB), `round ${round} match ${match}`, inputs);
  const verdict = succeeded(entry) ? readVerdict(entry.answer) : undefined;
  const aWins = verdict !== "B";
  return { round, a, b, winner: aWins ? a : b, loser: aWins ? b : a, decided_by: verdict === undefined ? "fallback" : "judge", judge: entry };
}

function judgeTask(task: string, a: string, b: string): string {
  return [
    task,
    "",
    "Two answers to this task follow. Decide which one is better.",
    "",
    "[A]",
    a,
    "",
    "[B]",
    b,
    "",
    'Reply with JSON only: {"winner": "A"} or {"winner": "B"}.',
  ].join("\n");
}

/**
 * The judge's verdict: `{"winner": "A"|"B"}` (also inside other text or a
 * fenced block), or an answer that is just `A` or `B` (any case, optional
 * punctuation). Anything else is no verdict.
 */
export function readVerdict(answer: string): "A" | "B" | undefined {
  const bare = /^\s*\W*([AaBb])\W*\s*$/.exec(answer);
  if (bare !== null) return bare[1]!.toUpperCase() as "A" | "B";
  const json = /"winner"\s*:\s*"\s*([AaBb])\s*"/.exec(answer);
  if (json !== null) return json[1]!.toUpperCase() as "A" | "B";
  return undefined;
}
