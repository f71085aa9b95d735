/**
 * A rolled-back result after compensation: each succeeded action says what
 * became of its external effects — `compensated: true`, or its
 * `compensation_error` — and its warning names what remains.
 */
import type { ProposalResult } from "@car/ir";
import type { CompensationReport } from "./compensation-run.ts";

export const COMPENSATED_WARNING = "proposal aborted; state effects were rolled back; external effects were undone by its compensation";
const REMAINS = "proposal aborted; state effects were rolled back; external effects remain";

export function withCompensation(result: ProposalResult, report: CompensationReport): ProposalResult {
  const compensated = new Set(report.compensated);
  const remains = new Map(report.not_undone.map((n) => [n.action_id, n.reason]));
  for (const r of result.results) {
    if (r.rolled_back !== true) continue;
    if (compensated.has(r.action_id)) {
      r.compensated = true;
      r.error = COMPENSATED_WARNING;
      continue;
    }
    const error = report.errors.get(r.action_id);
    if (error !== undefined) r.compensation_error = error;
    const why = remains.get(r.action_id);
    if (why !== undefined) r.error = `${REMAINS}: ${why}`;
  }
  return result;
}
