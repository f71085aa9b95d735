/**
 * The optimistic check a commit runs against the versions it locked: the
 * same conflict kinds as @car/verify's `transactionCheck`, found against the
 * live database instead of a snapshot, so the `Strict` / `Warn` / `Off`
 * modes (`judgeTransaction`) mean the same thing across processes.
 *
 * - `stale_read`: a key the proposal read (effective read set, state reads)
 *   is no longer at the version it saw; or an assumption's `read_version`
 *   is older than the key's version.
 * - `belief_divergence`: an assumption's `expected_value` is not the value.
 * - `write_write`: a key the proposal writes moved past the version its
 *   writes were built on (another runtime committed a write to it first).
 */
import { type CarError, jsonEquals } from "@car/ir";
import type { JsonValue } from "@car/ir";
import type { TransactionConflict } from "@car/verify";
import type { ProposalCommit } from "@car/engine";
import { commitRefusal } from "@car/engine/durable";

/** A key as the commit transaction found it. */
export interface LockedKey {
  value: JsonValue | undefined;
  version: number;
}

export function findConflicts(
  commit: ProposalCommit,
  writeBase: ReadonlyMap<string, { version: number; action_id: string }>,
  current: (key: string) => LockedKey,
): TransactionConflict[] {
  const out: TransactionConflict[] = [];
  const staleKeys = new Set<string>();
  const seen = new Set<string>();
  const push = (c: TransactionConflict): void => {
    const id = `${c.kind}\u0000${c.key}\u0000${c.actions.join("\u0000")}`;
    if (seen.has(id)) return;
    seen.add(id);
    if (c.kind !== "write_write") staleKeys.add(c.key);
    out.push(c);
  };
  for (const read of commit.reads) {
    const now = current(read.key).version;
    if (now === read.version) continue;
    push({
      kind: "stale_read",
      key: read.key,
      actions: [read.action_id],
      explanation: `'${read.action_id}' read '${read.key}' at version ${read.version}, but another writer committed version ${now} before this proposal`,
      resolution: `run the proposal again against the current state of '${read.key}'`,
    });
  }
  for (const a of commit.assumptions) {
    const now = current(a.key);
    if (a.read_version !== undefined && a.read_version < now.version) {
      push({
        kind: "stale_read",
        key: a.key,
        actions: [a.action_id],
        explanation: `'${a.action_id}' assumes '${a.key}' at version ${a.read_version}, but it is at version ${now.version}`,
        resolution: `re-read '${a.key}' and re-plan against version ${now.version}`,
      });
    }
    if (a.expected_value !== undefined && (now.value === undefined || !jsonEquals(now.value, a.expected_value))) {
      push({
        kind: "belief_divergence",
        key: a.key,
        actions: [a.action_id],
        explanation: `'${a.action_id}' assumes '${a.key}' is ${JSON.stringify(a.expected_value)}, but it holds ${now.value === undefined ? "nothing" : JSON.stringify(now.value)}`,
        resolution: `refresh the belief about '${a.key}' before acting on it`,
      });
    }
  }
  for (const [key, base] of writeBase) {
    const now = current(key).version;
    // A key already reported as read stale is the same story told once.
    if (now === base.version || staleKeys.has(key)) continue;
    push({
      kind: "write_write",
      key,
      actions: [base.action_id],
      explanation: `'${base.action_id}' writes '${key}' on top of version ${base.version}, but another writer committed version ${now} first`,
      resolution: `run the proposal again so its write builds on the current value of '${key}'`,
    });
  }
  return out;
}

/** The typed refusal for blocking conflicts: `stale_read` when a read or belief is stale, else `write_conflict`. */
export function conflictError(conflicts: readonly TransactionConflict[]): CarError {
  const stale = conflicts.some((c) => c.kind !== "write_write");
  return commitRefusal(
    stale ? "stale_read" : "write_conflict",
    conflicts.map((c) => c.key),
    { conflicts: [...conflicts] },
  );
}
