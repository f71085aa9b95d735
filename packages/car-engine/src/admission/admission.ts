/**
 * What admission decides about one proposal: its findings (any finding
 * rejects the whole proposal, and nothing runs) and what the run carries
 * forward from it.
 */
import type { CarErrorCode } from "@car/ir";
import type { ApprovalRecord } from "@car/policy";

export interface AdmissionFinding {
  /** Declaration index of the offending action, or -1 for the proposal as a whole. */
  index: number;
  message: string;
  /** The `CarError` code the rejection is reported under (`RunReport.code`). */
  code: CarErrorCode;
}

export interface Admission {
  findings: AdmissionFinding[];
  /** `hasRefs[i]`: action i's parameters hold output references (validated at dispatch instead). */
  hasRefs: Uint8Array;
  /** By action id: the ledger approval that admitted an action with references; it answers for the resolved form at dispatch. */
  approvals: Map<string, ApprovalRecord>;
}
