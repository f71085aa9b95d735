/**
 * A commit the store refused for a conflict (`commit_refused`, PostgreSQL
 * strict mode or a SQLite writer that moved a key first), said the same way
 * by `car run` (a stderr line, the code's exit status) and `proposal.submit`
 * (a JSON-RPC error with the code's number), on either backend.
 */
import { CarError, type CarErrorCode } from "@car/ir";
import type { CarEvent, EventQuery } from "@car/engine";
import { type StoredEventLog, storedEvents } from "./car-database.ts";

/**
 * The `commit_refused` event of the proposal's latest run (an earlier run
 * may have used the same id), if there is one. Read from the database where
 * the log is shared: a runtime's local copy may not hold its own rollback yet.
 */
export async function commitRefusalOf(log: StoredEventLog, proposalId: string): Promise<CarEvent | undefined> {
  // Only the two kinds that answer: a run's start and its refusal (not every event of a large proposal).
  const filter: EventQuery = { proposal_id: proposalId, kinds: ["proposal_received", "commit_refused"] };
  const events = await storedEvents(log, filter);
  const from = events.findLastIndex((e) => e.kind === "proposal_received");
  return events.slice(Math.max(from, 0)).find((e) => e.kind === "commit_refused");
}

/** `commit refused: <what>: <keys> — every change was rolled back (<code>)`. */
export function refusalMessage(refusal: CarEvent): string {
  return `${String(refusal.data["reason"])} — every change was rolled back (${String(refusal.data["code"])})`;
}

/** The refusal as the error it is (`stale_read` / `write_conflict`), naming the keys. */
export function refusalError(refusal: CarEvent, details: Record<string, unknown> = {}): CarError {
  return new CarError(refusal.data["code"] as CarErrorCode, refusalMessage(refusal), { keys: refusal.data["keys"], ...details });
}
