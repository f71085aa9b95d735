/**
 * A commit the store refused for a conflict, worded the same on every
 * backend (SQLite, PostgreSQL) so logs and alerts match whichever one ran:
 * `stale_read` when a key the proposal read (or assumed) moved before it
 * committed, `write_conflict` when another writer committed a key it writes
 * first. `details.keys` names the keys, sorted.
 */
import { CarError } from "@car/ir";

export type RefusalCode = "stale_read" | "write_conflict";

const WHAT: Record<RefusalCode, string> = {
  stale_read: "state the proposal read changed before it committed",
  write_conflict: "another writer committed keys this proposal writes first",
};

export function commitRefusal(code: RefusalCode, keys: Iterable<string>, details: Record<string, unknown> = {}): CarError {
  const sorted = [...new Set(keys)].sort();
  return new CarError(code, `commit refused: ${WHAT[code]}: ${sorted.join(", ")}`, { ...details, keys: sorted });
}
