/**
 * A store one runtime borrows from its owner (a server shares one database
 * among its sessions): the view has everything a runtime uses but no
 * `close`, so closing the borrowing runtime leaves the store open for the
 * owner and everyone else borrowing it. A durable store's audit face
 * (postures, chain verification) stays visible, so what verifies the log
 * before acting on it (resuming a compensation) still does.
 */
import type { ChainOptions } from "./chain-verify.ts";
import { isAuditedStore } from "./durable-store.ts";
import type { RuntimeStore } from "../store/runtime-store.ts";

export function borrowedStore(store: RuntimeStore): RuntimeStore {
  const view: RuntimeStore = {
    state: store.state,
    events: store.events,
    approvals: store.approvals,
    commitProposal: (commit) => store.commitProposal(commit),
  };
  if (store.beginProposal !== undefined) view.beginProposal = (begin) => store.beginProposal!(begin);
  if (store.recover !== undefined) view.recover = () => store.recover!();
  if (isAuditedStore(store))
    Object.assign(view, { postures: store.postures, verifyChain: (options?: ChainOptions) => store.verifyChain(options), keyedDigest: store.keyedDigest });
  return view;
}
