/**
 * What a durable backend (SQLite, PostgreSQL) offers beyond the engine's
 * `RuntimeStore`: the approval ledger and per-agent postures in the same
 * database, chain verification and retention. Methods may be synchronous
 * (SQLite) or asynchronous (a network database); callers await them.
 */
import type { ApprovalLedger, ApprovalRecord, PermissionTier, Posture } from "@car/policy";
import type { RunStore } from "../runs/run-store.ts";
import type { RuntimeStore } from "../store/runtime-store.ts";
import type { ChainOptions, ChainReport } from "./chain-verify.ts";
import type { LogCutAct, SignedCheckpoint } from "./checkpoint.ts";

type MaybePromise<T> = T | Promise<T>;

/** A ledger entry as stored: the decision plus its id and, once revoked, who revoked it when. */
export interface LedgerEntry extends ApprovalRecord {
  id: number;
  /** Milliseconds since the epoch. */
  revoked_at?: number;
  revoked_by?: string;
}

/** An approval ledger whose standing grants can be listed and revoked. */
export interface DurableApprovalLedger extends ApprovalLedger {
  list(): Promise<LedgerEntry[]>;
  /**
   * Approvals still in force at `now` (the newest decision for their
   * fingerprint, not expired, not revoked): what `revoke` takes back.
   */
  grants(now: number): Promise<LedgerEntry[]>;
  /** Revokes a standing grant; `not_found` when `id` is not one. Later evaluations of its operation ask again. */
  revoke(id: number, by: string, now: number): Promise<LedgerEntry>;
}

/** A per-agent posture for every tier (`tier: null`) or for one tier. */
export interface PostureEntry {
  agent_id: string;
  tier: PermissionTier | null;
  posture: Posture;
  /** Milliseconds since the epoch. */
  updated_at: number;
}

export interface PostureStore {
  /** The agent's posture for `tier`: its per-tier entry, else its all-tier entry, else undefined (the tier gate decides). */
  resolve(agent_id: string, tier: PermissionTier): MaybePromise<Posture | undefined>;
  set(agent_id: string, posture: Posture, tier: PermissionTier | null, now: number): MaybePromise<PostureEntry>;
  /** Removes the agent's entry for `tier` (or for every tier when null); returns how many were removed. */
  clear(agent_id: string, tier: PermissionTier | null): MaybePromise<number>;
  list(): MaybePromise<PostureEntry[]>;
}

/** How much of the log to keep; whichever bound is set applies (both: the tighter). */
export interface RetentionPolicy {
  max_events?: number;
  max_age_ms?: number;
  /** `archive` (default when `archive_path` is set): removed events go to a JSON-lines file first; `truncate`: dropped. */
  mode: "archive" | "truncate";
  archive_path?: string;
  /** The operator act this cut is (default `retention`); `clear` may remove every event (`max_events: 0`). */
  act?: LogCutAct;
}

export interface RetentionResult {
  removed: number;
  checkpoint: SignedCheckpoint | null;
}

/**
 * What every durable backend offers a server or a CLI: per-agent postures,
 * run traces and chain verification, and cuts of the log (retention, truncate, clear) where the backend has them (SQLite, PostgreSQL).
 */
export interface AuditedRuntimeStore extends RuntimeStore {
  readonly postures: PostureStore;
  /** Agent run traces (`runs.*`), kept beside the log so they outlive reconnects and restarts. */
  readonly runs: RunStore;
  verifyChain(options?: ChainOptions): MaybePromise<ChainReport>;
  /**
   * HMAC-SHA256 under the audit key, for digests that leave the process
   * (a span's parameter digest); absent when the store has no audit key.
   */
  readonly keyedDigest?: ((text: string) => string) | undefined;
  /** Applies the retention policy (the configured one, or `policy`) now. */
  enforceRetention?(now?: number, policy?: RetentionPolicy): MaybePromise<RetentionResult>;
}

/** Whether `store` is a durable backend with postures and a verifiable chain. */
export function isAuditedStore(store: RuntimeStore): store is AuditedRuntimeStore {
  const s = store as Partial<AuditedRuntimeStore>;
  return s.postures !== undefined && s.runs !== undefined && typeof s.verifyChain === "function";
}

export interface DurableRuntimeStore extends AuditedRuntimeStore {
  readonly approvals: DurableApprovalLedger;
  /** Applies the retention policy now (also done after every commit when one is configured). */
  enforceRetention(now?: number, policy?: RetentionPolicy): MaybePromise<RetentionResult>;
  checkpoints(): MaybePromise<SignedCheckpoint[]>;
}

/** The `posture` lookup @car/policy's `ApprovalGate` takes, for one agent (synchronous for SQLite, a promise for a network database). */
export function postureLookup(postures: Pick<PostureStore, "resolve">, agent_id: string): (tier: PermissionTier) => MaybePromise<Posture | undefined> {
  return (tier) => postures.resolve(agent_id, tier);
}
