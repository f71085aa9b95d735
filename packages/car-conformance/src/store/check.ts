/**
 * What the RuntimeStore conformance suite is made of: a store harness (how
 * the suite reaches a backend), a check and the context it runs in, and the
 * results. The checks themselves sit one file per capability beside this one.
 */
import type { manualClock } from "@car/ir";
import type { Clock } from "@car/ir";
import type { JsonValue } from "@car/ir";
import type { Runtime, RuntimeStore } from "@car/engine";

export type MaybePromise<T> = T | Promise<T>;

/** How the suite reaches a backend: a fresh data set per check, opened as often as a check needs. */
export interface StoreHarness {
  /** True when a later `open` sees what an earlier one wrote. Durable checks are skipped (with this reason) otherwise. */
  durable: boolean;
  /** A store over this harness's data; a durable backend opens the same data again on every call. */
  open(clock: Clock): MaybePromise<RuntimeStore>;
  /** Deletes the data (temporary files, schemas). Stores are closed by the suite first. */
  dispose(): MaybePromise<void>;
  /** Edits the stored tables directly, as a database writer without the audit key would; the table checks need it. */
  tamper?: StoreTamper;
}

/**
 * Direct edits of a backend's tables, for the checks that the audit covers
 * every table the runtime trusts (store/tables.ts). Each edits the data the
 * harness's stores open, bypassing the store.
 */
export interface StoreTamper {
  /** Inserts a standing, unscoped approval of `fingerprint` at `full_access`. */
  forgeApproval(fingerprint: string): MaybePromise<void>;
  /** Deletes every revocation (revoked and spent approvals). */
  unrevokeApprovals(): MaybePromise<void>;
  /** Sets every stored posture of `agent_id` to `posture`. */
  editPosture(agent_id: string, posture: string): MaybePromise<void>;
  /** Sets the status of `proposal_id`'s stored run(s) to `status`. */
  editProposalStatus(proposal_id: string, status: string): MaybePromise<void>;
  /** Copies the approval, revocation and posture rows aside (seals included), for `restoreRows`. */
  saveRows(): MaybePromise<void>;
  /** Puts the rows `saveRows` copied back in place of the current ones: a rollback to older rows with old, valid seals. */
  restoreRows(): MaybePromise<void>;
  /** Deletes the newest approval row of `fingerprint` (with its revocation, if any). */
  deleteNewestApproval(fingerprint: string): MaybePromise<void>;
  /** Sets the value of the newest stored transition of `key`. */
  editTransition(key: string, value: JsonValue): MaybePromise<void>;
  /** Deletes the newest stored transition of `key`. */
  deleteTransition(key: string): MaybePromise<void>;
  /** Inserts a transition setting `key` to `value`, one version past its newest, as a direct write. */
  forgeTransition(key: string, value: JsonValue): MaybePromise<void>;
}

/** What a check is given: the harness's stores, a manual clock, and a runtime over a new store. */
export interface StoreCheckContext {
  readonly clock: ReturnType<typeof manualClock>;
  open(): Promise<RuntimeStore>;
  /** Closes every store this check opened (a durable check then reopens). */
  closeAll(): Promise<void>;
  /** The harness's tamper hooks, when it has them. */
  readonly tamper: StoreTamper | undefined;
  /** A `Runtime` over a newly opened store, with tools `ok` (answers "done") and `boom` (throws). */
  runtime(): Promise<{ rt: Runtime; store: RuntimeStore }>;
}

/**
 * What a durable check needs beyond `durable: true`; absent parts make it
 * skip with the reason. Store parts, and of the harness: `tamper` (its
 * tamper hooks).
 */
export type DurablePart = "verifyChain" | "beginProposal" | "recover" | "postures" | "tamper" | "runs" | "enforceRetention" | "checkpoints";

export interface StoreCheck {
  name: string;
  /** Set for checks of durability; the parts of the store they use. */
  durable?: readonly DurablePart[];
  run(t: StoreCheckContext): Promise<void>;
}

export type StoreCheckStatus = "passed" | "failed" | "skipped";

export interface StoreCheckResult {
  name: string;
  status: StoreCheckStatus;
  /** Why a check was skipped. */
  reason?: string;
  /** What failed (the assertion or error message). */
  error?: string;
  duration_ms: number;
}

export interface StoreConformanceReport {
  store: string;
  passed: number;
  failed: number;
  skipped: number;
  results: StoreCheckResult[];
}

/** The manual clock's start in every check: the timestamps a check asserts on are relative to it. */
export const START = Date.parse("2026-01-01T00:00:00.000Z");
