/**
 * The skill-store seam: versioned skill records by name. Synchronous, like
 * `EventLog.append`, so outcome reporting never waits on I/O in memory; the
 * JSON-file store writes through on every change.
 */
import type { SkillRecord } from "./types.ts";

export interface SkillStore {
  /** The latest version of every skill, ordered by name. */
  list(): SkillRecord[];
  /** The latest version of a skill. */
  get(name: string): SkillRecord | undefined;
  /** Every version of a skill, oldest first; [] for an unknown name. */
  history(name: string): SkillRecord[];
  /**
   * Stores a copy of `record`: version `latest + 1` (or 1 for a new name) is
   * appended; the latest version's own number replaces it (stats changes).
   * Any other version is an `invalid_params` error.
   */
  put(record: SkillRecord): void;
  /** Removes every version of a skill; false when there was none. */
  delete(name: string): boolean;
}
