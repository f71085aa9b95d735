/**
 * How a caller acts on a transaction report. Kept beside the check, as data,
 * so the engine and a durable state backend apply one definition:
 * - `strict`: any conflict refuses the commit;
 * - `warn`: conflicts are surfaced, the commit proceeds;
 * - `off`: the check's findings are ignored (a caller may skip running it).
 */
import type { TransactionConflict, TransactionReport } from "./transaction.ts";

export type TransactionMode = "strict" | "warn" | "off";

export const TRANSACTION_MODES: readonly TransactionMode[] = ["strict", "warn", "off"];

export interface TransactionVerdict {
  /** Whether the commit may proceed. */
  admit: boolean;
  /** Conflicts that refused it (only under `strict`). */
  blocking: TransactionConflict[];
  /** Conflicts to surface without refusing (only under `warn`). */
  warnings: TransactionConflict[];
}

export function judgeTransaction(report: TransactionReport, mode: TransactionMode): TransactionVerdict {
  switch (mode) {
    case "strict":
      return { admit: report.conflicts.length === 0, blocking: [...report.conflicts], warnings: [] };
    case "warn":
      return { admit: true, blocking: [], warnings: [...report.conflicts] };
    case "off":
      return { admit: true, blocking: [], warnings: [] };
  }
}
