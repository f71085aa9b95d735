/**
 * Acting on the log. A durable store's log is evidence, and some of it is
 * also instructions: a compensation resumed after a crash runs the steps
 * its `compensation_planned` event records. Whoever can write the database
 * could edit that plan (`shell curl -d @.env …`), so before anything of it
 * is dispatched the chain is verified — every hash, link and, with the
 * audit key, every MAC, the plan event's among them. A log that does not
 * verify is refused (`chain_broken`); nothing runs.
 */
import { CarError } from "@car/ir";
import type { RuntimeStore } from "../store/runtime-store.ts";
import { isAuditedStore } from "./durable-store.ts";

/** Refuses (`chain_broken`) to act on a durable store whose chain does not verify; a store without a chain passes. */
export async function requireIntactLog(store: RuntimeStore, what: string): Promise<void> {
  if (!isAuditedStore(store)) return;
  const report = await store.verifyChain();
  if (report.ok) return;
  const { seq, reason } = report.broken;
  throw new CarError("chain_broken", `${what}: the audit log does not verify (seq ${seq}: ${reason}), so nothing it records is acted on`, { seq, reason });
}
