/**
 * What keeps humans and supervisors in the loop across the whole server,
 * shared by every session: the supervision gate, the approvals that wait,
 * and the `host.event` feed both report to. With a `SharedOversight`
 * (`--db postgres://…`) the servers on one database are one system: the
 * other servers' wake-ups arrive here and each is turned into a re-read —
 * of the subscribers, of an intent's row, of the approval ledger.
 */
import { ApprovalWaits, DEFAULT_APPROVAL_POLL_MS, type OversightWakeups, type SharedOversight, type WaitingApproval } from "@car/engine";
import { HostEvents } from "./host-events.ts";
import { DEFAULT_DECISION_TIMEOUT_MS, SupervisionHub } from "./supervision-hub.ts";

export interface Oversight {
  supervision: SupervisionHub;
  host: HostEvents;
  approvals: ApprovalWaits;
  /** The approval waits `permission.pending` lists: this server's, or with shared oversight every live server's. */
  waitingApprovals(): Promise<WaitingApproval[]>;
  /** Starts receiving the other servers' wake-ups (nothing to do without shared oversight). */
  start(): Promise<void>;
  /** Stops receiving them and removes this server's subscribers from the shared table. */
  close(): Promise<void>;
}

export function createOversight(decisionTimeoutMs: number = DEFAULT_DECISION_TIMEOUT_MS, shared?: SharedOversight): Oversight {
  const host = new HostEvents(shared);
  // Shared: each wait is listed in the table too; one write at a time, so a wait's removal never overtakes its listing.
  let listing: Promise<void> = Promise.resolve();
  const list = (write: (s: SharedOversight) => Promise<void>): void => {
    if (shared !== undefined) listing = listing.then(() => write(shared)).catch(() => {});
  };
  const approvals = new ApprovalWaits(
    {
      requested: (w) => {
        list((s) => s.addWait(w));
        host.emit("approval_requested", () => ({
          wait_id: w.id,
          fingerprint: w.fingerprint,
          required: w.required,
          granted: w.granted,
          ...(w.tool !== undefined ? { tool: w.tool } : {}),
          proposal_id: w.proposal_id,
          asked_by: w.asked_by,
        }));
      },
      resolved: (w, decision, reviewer) => {
        list((s) => s.removeWait(w.id));
        host.emit("approval_resolved", () => ({ wait_id: w.id, fingerprint: w.fingerprint, proposal_id: w.proposal_id, decision, reviewer }));
      },
    },
    DEFAULT_APPROVAL_POLL_MS,
    shared === undefined ? "wait" : `wait-${shared.serverId}`,
  );
  const supervision = new SupervisionHub(decisionTimeoutMs, host, shared);
  if (shared === undefined) {
    return { supervision, host, approvals, waitingApprovals: async () => approvals.list(), start: async () => {}, close: async () => {} };
  }

  // One re-read of the subscribers at a time, in order: the last one read is the table as it is now.
  let reading: Promise<void> = Promise.resolve();
  const reloadSubscribers = (): Promise<void> =>
    (reading = reading
      .then(async () => {
        const others = (await shared.subscribers()).filter((s) => s.server_id !== shared.serverId);
        supervision.setRemote(others.filter((s) => s.kind === "supervision"));
        host.remoteSubscribers = others.filter((s) => s.kind === "host").length;
      })
      .catch(() => {}));
  const wakeups: OversightWakeups = {
    intentParked: (id) => void supervision.remoteParked(id).catch(() => {}),
    intentDecided: (id) => void supervision.wake(id).catch(() => {}),
    approvalRecorded: (fingerprint) => void approvals.nudge(fingerprint),
    hostEvent: (event) => host.deliver(event),
    subscribersChanged: () => void reloadSubscribers(),
    resync: () => {
      void reloadSubscribers();
      void supervision.resync();
      for (const w of approvals.list()) approvals.nudge(w.fingerprint);
    },
  };
  return {
    supervision,
    host,
    approvals,
    waitingApprovals: () => shared.waits(),
    async start() {
      await shared.start(wakeups);
      await reloadSubscribers();
    },
    async close() {
      await listing;
      await shared.close();
    },
  };
}
