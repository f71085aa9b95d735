/**
 * Acting on the log. A durable store's log is evidence, and some of it is
 * also instructions: a compensation resumed after a crash runs the steps
 * its `compensation_planned` event records. Whoever can write the database
 * could edit that plan (`shell curl -d @.env …`), so before anything of it
 * is dispatched the chain is verified — every hash, link and, with the
 * audit key, every MAC, the plan event's among them — and the events acted
 * on are the ones that verification read, not a second read a writer could
 * have edited in between. A log that does not verify is refused
 * (`chain_broken`); nothing runs.
 */
import { CarError } from "@car/ir";
import type { CarEvent } from "../events/event.ts";
import type { RuntimeStore } from "../store/runtime-store.ts";
import { isAuditedStore } from "./durable-store.ts";

/**
 * The events of `proposal_id`, oldest first, from a verified read of the
 * chain; a store without a chain: its log as it stands. Refuses
 * (`chain_broken`) a log that does not verify.
 */
export async function verifiedProposalEvents(store: RuntimeStore, proposal_id: string, what: string): Promise<readonly CarEvent[]> {
  if (!isAuditedStore(store)) return store.events.query({ proposal_id });
  const report = await store.verifyChain({ proposal_id });
  if (!report.ok) {
    const { seq, reason } = report.broken;
    throw new CarError("chain_broken", `${what}: the audit log does not verify (seq ${seq}: ${reason}), so nothing it records is acted on`, { seq, reason });
  }
  if (report.proposal_events === undefined)
    throw new CarError("storage_error", `${what}: the store verified its chain but did not return the verified events, so nothing is acted on`);
  return report.proposal_events;
}
