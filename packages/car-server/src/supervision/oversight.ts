/**
 * What keeps humans and supervisors in the loop across the whole server,
 * shared by every session: the supervision gate, the approvals that wait,
 * and the `host.event` feed both report to.
 */
import { ApprovalWaits } from "@car/engine";
import { HostEvents } from "./host-events.ts";
import { DEFAULT_DECISION_TIMEOUT_MS, SupervisionHub } from "./supervision-hub.ts";

export interface Oversight {
  supervision: SupervisionHub;
  host: HostEvents;
  approvals: ApprovalWaits;
}

export function createOversight(decisionTimeoutMs: number = DEFAULT_DECISION_TIMEOUT_MS): Oversight {
  const host = new HostEvents();
  const approvals = new ApprovalWaits({
    requested: (w) =>
      host.emit("approval_requested", () => ({
        wait_id: w.id,
        fingerprint: w.fingerprint,
        required: w.required,
        granted: w.granted,
        ...(w.tool !== undefined ? { tool: w.tool } : {}),
        proposal_id: w.proposal_id,
        asked_by: w.asked_by,
      })),
    resolved: (w, decision, reviewer) =>
      host.emit("approval_resolved", () => ({ wait_id: w.id, fingerprint: w.fingerprint, proposal_id: w.proposal_id, decision, reviewer })),
  });
  return { supervision: new SupervisionHub(decisionTimeoutMs, host), host, approvals };
}
