/**
 * Approvals that wait (reference websocket-core.md `permission.*`): a
 * proposal whose action needs an approval may wait for one instead of being
 * rejected. Each wait is listed here — fingerprint, required and granted
 * tier, tool, parameter key names, who asked — until a decision lands in the
 * approval ledger or the deadline passes. The ledger stays the one place a
 * decision is kept: a waiter is only woken (`nudge`, or its own poll for a
 * decision recorded by another process, e.g. `car approvals approve`) and
 * reads the ledger again.
 */
import type { PermissionTier } from "@car/policy";

/** One waiting approval, as `permission.pending` lists it. */
export interface WaitingApproval {
  id: string;
  fingerprint: string;
  required: PermissionTier;
  granted: PermissionTier;
  tool?: string;
  /** The action's parameter key names (never a value). */
  parameter_keys: string[];
  action_id: string;
  proposal_id: string;
  run_id: string;
  session_id: string | null;
  /** Who submitted the proposal (`agent:<id>`, `conn:<id>`, `car run`). */
  asked_by: string;
  /** When the wait began and when it ends in a rejection (ms since the epoch). */
  created_at: number;
  deadline: number;
}

/** Told when a wait begins and when it ends (a host's `host.event`). */
export interface ApprovalWaitListener {
  requested(wait: WaitingApproval): void;
  resolved(wait: WaitingApproval, decision: string, reviewer: string): void;
}

/** How often a waiter re-reads the ledger on its own, for decisions recorded by another process. */
export const DEFAULT_APPROVAL_POLL_MS = 500;

export class ApprovalWaits {
  readonly #waiting = new Map<string, { wait: WaitingApproval; wake: () => void }>();
  #seq = 0;

  constructor(
    private readonly listener?: ApprovalWaitListener,
    readonly pollMs: number = DEFAULT_APPROVAL_POLL_MS,
    /** What each wait's id starts with: a host sharing its waits with others makes it its own (`wait-<host>`). */
    private readonly idPrefix: string = "wait",
  ) {}

  /** Every wait, oldest first. */
  list(): WaitingApproval[] {
    return [...this.#waiting.values()].map((w) => w.wait);
  }

  get size(): number {
    return this.#waiting.size;
  }

  /** A decision may have landed on `fingerprint`: its waiters read the ledger again now. Returns how many were woken. */
  nudge(fingerprint: string): number {
    let woken = 0;
    for (const w of this.#waiting.values()) {
      if (w.wait.fingerprint !== fingerprint) continue;
      w.wake();
      woken++;
    }
    return woken;
  }

  /**
   * Waits until `decided()` answers (a decision now answers the wait), the
   * deadline passes or `signal` fires; `decided` is asked after every nudge
   * and poll. Resolves with that answer, or undefined at the deadline or on
   * cancellation.
   */
  async wait<D extends WaitOutcome>(
    wait: Omit<WaitingApproval, "id">,
    decided: () => Promise<D | undefined>,
    signal: AbortSignal | undefined,
  ): Promise<D | undefined> {
    const entry: WaitingApproval = { id: `${this.idPrefix}-${++this.#seq}`, ...wait };
    let wake: () => void = () => {};
    this.#waiting.set(entry.id, { wait: entry, wake: () => wake() });
    this.listener?.requested(entry);
    let outcome: WaitOutcome = { decision: "deny", reviewer: "timeout" };
    try {
      while (signal?.aborted !== true) {
        const left = entry.deadline - Date.now();
        if (left <= 0) return undefined;
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, Math.min(left, this.pollMs));
          wake = done;
          signal?.addEventListener("abort", done, { once: true });
        });
        const answer = await decided();
        if (answer !== undefined) {
          outcome = answer;
          return answer;
        }
      }
      outcome = { decision: "deny", reviewer: "cancelled" };
      return undefined;
    } finally {
      this.#waiting.delete(entry.id);
      this.listener?.resolved(entry, outcome.decision, outcome.reviewer);
    }
  }
}

/** How a wait ended: the verdict and who gave it (`timeout` / `cancelled` when nobody did). */
export interface WaitOutcome {
  decision: string;
  reviewer: string;
}
