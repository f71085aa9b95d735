/**
 * Runs a compensation plan: one step at a time, in plan order (the reverse of
 * completion), each through the runtime's dispatch path, with its events.
 * A failed step is recorded and the next one still runs — leaving one effect
 * in place is no reason to leave the others. A *terminal* failure stops the
 * phase: the tool said more calls would do harm, so the remaining steps are
 * not attempted and are reported as such.
 *
 * Events (all under the proposal's id, in the hash chain):
 * `compensation_planned` (the steps, with what each dispatches, and the gaps),
 * `compensation_started` / `compensation_succeeded` / `compensation_failed`
 * per step, and `compensation_completed` (what was undone, what remains).
 * `compensation_planned` carries each step's tool and parameters (as
 * declared, with each reference's value once beside them) so a phase a crash
 * interrupted can be resumed from the log alone.
 */
import type { JsonObject } from "@car/ir";
import { COMPENSATION_EVENTS } from "../events/event-kinds.ts";
import type { CompensationPlan, CompensationStep } from "./compensation-plan.ts";
import { gapText } from "./compensation-plan.ts";

/** One step's outcome, from the dispatch path. */
export type StepOutcome = { ok: true } | { ok: false; error: string; terminal: boolean };

export interface CompensationReport {
  /** Ids of the forward actions whose compensation succeeded. */
  readonly compensated: string[];
  /** Forward actions whose effects remain, with why (a gap, or the compensation's error). */
  readonly not_undone: { action_id: string; reason: string }[];
  /** Per failed (or unattempted) step: the error, keyed by the forward action's id. */
  readonly errors: Map<string, string>;
}

export interface CompensationHooks {
  dispatch(step: CompensationStep): Promise<StepOutcome>;
  emit(kind: string, action_id: string | undefined, data: JsonObject): void;
}

/** The plan as `compensation_planned` records it: parameters as declared, and each reference's value once. */
export function plannedData(plan: CompensationPlan): JsonObject {
  const data: JsonObject = {
    steps: plan.steps.map((s) => {
      const step: JsonObject = { action_id: s.action_id, tool: s.call.tool ?? null, parameters: s.declared ?? s.call.parameters };
      if (s.ref_index !== undefined) step["compensation_action"] = s.call.id;
      return step;
    }),
    not_undoable: plan.gaps.map((g) => ({ action_id: g.action_id, reason: g.reason })),
  };
  if (plan.references !== undefined) data["references"] = plan.references;
  return data;
}

/**
 * Runs `plan`. `done` holds the forward action ids whose compensation already
 * succeeded (a resumed phase skips them); `planned` is false on a resume, where
 * `compensation_planned` is already in the log.
 */
export async function runCompensation(
  plan: CompensationPlan,
  hooks: CompensationHooks,
  done: ReadonlySet<string> = new Set(),
  planned = false,
): Promise<CompensationReport> {
  if (!planned) hooks.emit(COMPENSATION_EVENTS.planned, undefined, plannedData(plan));
  const report: CompensationReport = { compensated: [], not_undone: [], errors: new Map() };
  let stoppedBy: string | undefined;
  for (const step of plan.steps) {
    if (done.has(step.action_id)) {
      report.compensated.push(step.action_id);
      continue;
    }
    if (stoppedBy !== undefined) {
      const error = `not attempted: ${stoppedBy}`;
      report.errors.set(step.action_id, error);
      report.not_undone.push({ action_id: step.action_id, reason: `its compensation was ${error}` });
      continue;
    }
    hooks.emit(COMPENSATION_EVENTS.started, step.action_id, {
      tool: step.call.tool ?? null,
      ...(step.ref_index !== undefined ? { compensation_action: step.call.id } : {}),
    });
    let outcome: StepOutcome;
    try {
      outcome = await hooks.dispatch(step);
    } catch (error) {
      outcome = { ok: false, error: `internal error: ${error instanceof Error ? error.message : String(error)}`, terminal: false };
    }
    if (outcome.ok) {
      hooks.emit(COMPENSATION_EVENTS.succeeded, step.action_id, {});
      report.compensated.push(step.action_id);
      continue;
    }
    const data: JsonObject = { error: outcome.error };
    if (outcome.terminal) data["terminal"] = true;
    hooks.emit(COMPENSATION_EVENTS.failed, step.action_id, data);
    report.errors.set(step.action_id, outcome.error);
    report.not_undone.push({ action_id: step.action_id, reason: `its compensation failed: ${outcome.error}` });
    if (outcome.terminal) stoppedBy = `the compensation of '${step.action_id}' failed terminally`;
  }
  for (const gap of plan.gaps) report.not_undone.push({ action_id: gap.action_id, reason: gapText(gap.reason) });
  hooks.emit(COMPENSATION_EVENTS.completed, undefined, {
    compensated: report.compensated,
    not_undone: report.not_undone.map((n) => ({ action_id: n.action_id, reason: n.reason })),
    external_effects_undone: report.not_undone.length === 0,
  });
  return report;
}
