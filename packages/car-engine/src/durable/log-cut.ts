/**
 * What every store does the same way when it cuts its log (retention,
 * `events.truncate`, `events.clear`; DECISIONS §24): appends the removed
 * events to the archive file in archive mode, then signs the checkpoint
 * that names the act and links to the checkpoint before it. The stores
 * differ only in how they read, lock and delete.
 */
import { appendFileSync } from "node:fs";
import { CarError, rfc3339 } from "@car/ir";
import type { CarEvent } from "../events/event.ts";
import { costUsdOf } from "../events/metrics.ts";
import { type CheckpointKey, type SignedCheckpoint, signCheckpoint } from "./checkpoint.ts";
import { type CutRows, cutRowsDigest } from "./cut-rows.ts";
import type { RetentionPolicy } from "./durable-store.ts";

/**
 * `events`: the removed ones, oldest first (at least one). `previous`: the
 * newest checkpoint's signature, if any. `rows`: what the cut records of the
 * trusted tables (`cutRows` of the tables and the retained events, read in
 * the cut's transaction), which the store keeps beside the log and the
 * checkpoint signs the digest of.
 */
export function archiveAndSignCut(
  events: readonly CarEvent[],
  policy: RetentionPolicy,
  previous: string | undefined,
  key: CheckpointKey,
  now: number,
  rows: CutRows,
): SignedCheckpoint {
  const archivePath = policy.mode === "archive" ? policy.archive_path! : null;
  if (archivePath !== null) {
    try {
      appendFileSync(archivePath, events.map((event) => `${JSON.stringify(event)}\n`).join(""), { mode: 0o600 });
    } catch (error) {
      throw new CarError("storage_error", `cannot archive events to '${archivePath}': ${(error as Error).message}`, {}, { cause: error });
    }
  }
  const last = events.at(-1)!;
  return signCheckpoint(
    {
      seq: last.seq,
      hash: last.hash!,
      first_removed_seq: events[0]!.seq,
      removed: events.length,
      mode: policy.mode,
      archive_path: archivePath,
      act: policy.act ?? "retention",
      // What the removed events' agents spent, so cumulative cost survives the cut (events/metrics.ts).
      cost_usd: costUsdOf(events),
      rows_digest: cutRowsDigest(rows),
      created_at: rfc3339(now),
      previous: previous ?? null,
      key_id: key.id,
    },
    key,
  );
}
