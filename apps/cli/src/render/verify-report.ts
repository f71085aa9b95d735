/**
 * The human form of a VerificationResult: the verdict, the execution levels,
 * findings grouped by severity (errors first), write conflicts per key and
 * the simulated state. Findings come straight from @car/verify; this only
 * arranges them for reading.
 *
 * Produced line by line so a report on a million actions streams out. Long
 * lists — levels, the ids in one level, conflicts on one key, state keys —
 * show a bounded sample and a count; `--json` carries every entry.
 */
import type { Severity, VerificationResult } from "@car/ir";
import type { Colors } from "./color.ts";

const ORDER: Severity[] = ["error", "warning", "info"];
/** Most entries of one list a report prints before "… and N more". */
export const REPORT_SAMPLE = 20;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function sample(items: readonly string[], c: Colors): string {
  const shown = items.slice(0, REPORT_SAMPLE).join(", ");
  return items.length > REPORT_SAMPLE ? `${shown} ${c.dim(`… and ${items.length - REPORT_SAMPLE} more`)}` : shown;
}

function more(total: number, what: string, c: Colors): string {
  return `  ${c.dim(`… and ${plural(total - REPORT_SAMPLE, what)} more (every one is in --json)`)}`;
}

export function* verifyReportLines(proposalId: string, actionCount: number, result: VerificationResult, c: Colors): Generator<string> {
  const verdict = result.valid ? c.green(c.bold("valid")) : c.red(c.bold("INVALID"));
  yield `${c.bold(`proposal ${proposalId}`)}: ${verdict} — ${plural(actionCount, "action")} in ${plural(result.execution_levels.length, "level")}`;
  yield "";
  yield c.bold("Execution levels");
  const levels = result.execution_levels;
  for (let i = 0; i < Math.min(levels.length, REPORT_SAMPLE); i++) yield `  ${c.dim(String(i).padStart(3))}  ${sample(levels[i]!, c)}`;
  if (levels.length > REPORT_SAMPLE) yield more(levels.length, "level", c);

  const counts = new Map<Severity, number>();
  for (const issue of result.issues) counts.set(issue.severity, (counts.get(issue.severity) ?? 0) + 1);
  const summary = ORDER.filter((s) => counts.has(s)).map((s) => plural(counts.get(s)!, s));
  yield "";
  yield c.bold(`Issues${summary.length > 0 ? ` (${summary.join(", ")})` : ""}`);
  if (result.issues.length === 0) yield `  ${c.dim("none")}`;
  const paint = { error: c.red, warning: c.yellow, info: c.cyan };
  for (const severity of ORDER) {
    if (!counts.has(severity)) continue;
    for (const issue of result.issues) {
      if (issue.severity !== severity) continue;
      const where = issue.action_id ?? "(proposal)";
      yield `  ${paint[severity](severity.padEnd(7))}  ${where}: ${issue.message} ${c.dim(`[${issue.tier}]`)}`;
    }
  }

  if (result.conflicts.length > 0) {
    const byKey = new Map<string, string[]>();
    for (const [a, b, key] of result.conflicts) {
      const list = byKey.get(key);
      const pair = `${a} and ${b}`;
      if (list === undefined) byKey.set(key, [pair]);
      else if (list.length <= REPORT_SAMPLE) list.push(pair);
    }
    const perKey = new Map<string, number>();
    for (const [, , key] of result.conflicts) perKey.set(key, (perKey.get(key) ?? 0) + 1);
    yield "";
    yield c.bold(`Conflicts (${result.conflicts.length})`);
    for (const [key, pairs] of byKey) {
      const total = perKey.get(key)!;
      if (total === 1) yield `  ${c.yellow(key)}: written by ${pairs[0]} with no order between them`;
      else
        yield `  ${c.yellow(key)}: ${total} pairs written with no order between them: ${pairs.slice(0, REPORT_SAMPLE).join("; ")}${total > REPORT_SAMPLE ? c.dim(` … and ${total - REPORT_SAMPLE} more`) : ""}`;
    }
  }
  const rollback = result.rollback_contract;
  if (rollback !== undefined) {
    yield "";
    yield `${c.bold("Rollback")}: declared ${rollback.declared}; ${rollback.fully_undoable ? c.green("fully undoable") : c.yellow("not fully undoable")}${rollback.fully_undoable ? "" : " (with rollback: compensate)"}`;
    const said = {
      irreversible: "irreversible",
      missing_compensation: "compensable without a compensation",
      broken_compensation: "its compensation names no action",
    };
    for (const g of rollback.not_undoable.slice(0, REPORT_SAMPLE)) yield `  ${c.yellow(g.action_id)}: ${said[g.reason]}`;
    if (rollback.not_undoable.length > REPORT_SAMPLE) yield more(rollback.not_undoable.length, "action", c);
  }
  const stateKeys = Object.keys(result.simulated_state);
  if (stateKeys.length > 0) {
    yield "";
    yield c.bold("Simulated state");
    for (const key of stateKeys.slice(0, REPORT_SAMPLE)) yield `  ${key} = ${JSON.stringify(result.simulated_state[key])}`;
    if (stateKeys.length > REPORT_SAMPLE) yield more(stateKeys.length, "key", c);
  }
}

/** The whole report as one string, for callers that want it so (small results). */
export function verifyReport(proposalId: string, actionCount: number, result: VerificationResult, c: Colors): string {
  return [...verifyReportLines(proposalId, actionCount, result, c)].join("\n");
}
