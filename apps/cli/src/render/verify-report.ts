/**
 * The human form of a VerificationResult: the verdict, the execution levels,
 * findings grouped by severity (errors first) and write conflicts. Findings
 * come straight from @car/verify; this only arranges them for reading.
 */
import type { Severity, VerificationResult } from "@car/ir";
import type { Colors } from "./color.ts";

const ORDER: Severity[] = ["error", "warning", "info"];

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function verifyReport(proposalId: string, actionCount: number, result: VerificationResult, c: Colors): string {
  const lines: string[] = [];
  const verdict = result.valid ? c.green(c.bold("valid")) : c.red(c.bold("INVALID"));
  lines.push(`${c.bold(`proposal ${proposalId}`)}: ${verdict} — ${plural(actionCount, "action")} in ${plural(result.execution_levels.length, "level")}`);
  lines.push("");
  lines.push(c.bold("Execution levels"));
  result.execution_levels.forEach((ids, i) => lines.push(`  ${c.dim(String(i).padStart(3))}  ${ids.join(", ")}`));

  const counts = ORDER.map((s) => [s, result.issues.filter((i) => i.severity === s).length] as const).filter(([, n]) => n > 0);
  lines.push("");
  lines.push(c.bold(`Issues${counts.length > 0 ? ` (${counts.map(([s, n]) => plural(n, s)).join(", ")})` : ""}`));
  if (result.issues.length === 0) lines.push(`  ${c.dim("none")}`);
  const paint = { error: c.red, warning: c.yellow, info: c.cyan };
  for (const severity of ORDER) {
    for (const issue of result.issues.filter((i) => i.severity === severity)) {
      const where = issue.action_id ?? "(proposal)";
      lines.push(`  ${paint[severity](severity.padEnd(7))}  ${where}: ${issue.message} ${c.dim(`[${issue.tier}]`)}`);
    }
  }
  if (result.conflicts.length > 0) {
    lines.push("");
    lines.push(c.bold(`Conflicts (${result.conflicts.length})`));
    for (const [a, b, key] of result.conflicts) lines.push(`  ${c.yellow(key)}: written by ${a} and ${b} with no order between them`);
  }
  const rollback = result.rollback_contract;
  if (rollback !== undefined) {
    lines.push("");
    lines.push(`${c.bold("Rollback")}: declared ${rollback.declared}; ${rollback.fully_undoable ? c.green("fully undoable") : c.yellow("not fully undoable")}${rollback.fully_undoable ? "" : " (with rollback: compensate)"}`);
    const said = { irreversible: "irreversible", missing_compensation: "compensable without a compensation", broken_compensation: "its compensation names no action" };
    for (const g of rollback.not_undoable) lines.push(`  ${c.yellow(g.action_id)}: ${said[g.reason]}`);
  }
  const stateKeys = Object.keys(result.simulated_state);
  if (stateKeys.length > 0) {
    lines.push("");
    lines.push(c.bold("Simulated state"));
    for (const key of stateKeys) lines.push(`  ${key} = ${JSON.stringify(result.simulated_state[key])}`);
  }
  return lines.join("\n");
}
