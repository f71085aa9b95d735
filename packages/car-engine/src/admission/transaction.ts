/**
 * `transactionCheck` at admission (agent-ir-spec.md §transaction_check):
 * @car/verify's check over the parsed proposal and the store's current
 * versions of the keys it touches, judged by the runtime's mode. `strict`
 * rejects the actions in blocking conflicts (so nothing is dispatched),
 * `warn` records a `transaction_warning` event and runs, `off` checks
 * nothing.
 */
import { effectiveReadSet } from "@car/ir";
import type { ActionProposal, JsonObject, JsonValue } from "@car/ir";
import { judgeTransaction, transactionCheck } from "@car/verify";
import type { TransactionMode, VersionedValue } from "@car/verify";
import { EVENT_KINDS, type EventKind } from "../events/event-kinds.ts";
import type { StateStore } from "../store/state-store.ts";
import type { AdmissionFinding } from "./admission.ts";

export function transactionFindings(
  proposal: ActionProposal,
  state: StateStore,
  mode: TransactionMode,
  emit: (kind: EventKind, action_id: string | undefined, data: JsonObject) => void,
): AdmissionFinding[] {
  if (mode === "off") return [];
  const versions: Record<string, VersionedValue> = {};
  for (const action of proposal.actions) {
    const keys = [...effectiveReadSet(action), ...action.assumptions.map((a) => a.key)];
    for (const key of keys) {
      if (Object.hasOwn(versions, key) || !state.exists(key)) continue;
      versions[key] = { value: state.get(key) as JsonValue, version: state.version(key) };
    }
  }
  const verdict = judgeTransaction(transactionCheck(proposal, versions), mode);
  if (verdict.warnings.length > 0) {
    emit(EVENT_KINDS.transactionWarning, undefined, {
      mode,
      keys: [...new Set(verdict.warnings.map((c) => c.key))].sort(),
      conflicts: verdict.warnings as unknown as JsonValue[],
    });
  }
  const index = new Map(proposal.actions.map((a, i) => [a.id, i]));
  const findings: AdmissionFinding[] = [];
  for (const conflict of verdict.blocking) {
    for (const id of new Set(conflict.actions)) {
      findings.push({
        index: index.get(id) ?? -1,
        message: `transaction conflict (${conflict.kind}) on '${conflict.key}': ${conflict.explanation}`,
        code: "verification_failed",
      });
    }
  }
  return findings;
}
