/**
 * `@car/engine/durable`: the parts a durable store is built from, for store
 * packages (`@car/store-sqlite`, `@car/store-postgres`) and store authors.
 * Pure logic with no native dependency — the hash chain and its MAC,
 * signed checkpoints and anchors, chain verification, the approval and
 * posture row shapes and their seals, the replay that vouches for every
 * table the runtime trusts, dispatch-intent batching, state replay, the commit
 * refusal error — plus the engine's caching and feed building blocks a
 * backend extends. The store contract itself (`DurableRuntimeStore`,
 * `postureLookup`, …) is exported from `@car/engine`.
 */
export { type Anchor, type DatabaseIdentity, type HashAt, anchorBreak, anchorSummary, appendAnchor, readAnchors } from "./anchor.ts";
export { type ApprovalRow, approvalRecordedData, ledgerEntryOf, SPENT_BY } from "./approval-rows.ts";
export { type ChainBreak, type ChainOptions, type ChainReport, ChainVerifier, type StoredEventRow } from "./chain-verify.ts";
export {
  type Checkpoint,
  type CheckpointKey,
  type SignedCheckpoint,
  checkpointKey,
  checkpointProblem,
  cutCostUsd,
  storeCutCostUsd,
  loadOrCreateKeyFile,
  newCheckpointKey,
  parseHexKey,
  readKeyFile,
  signCheckpoint,
} from "./checkpoint.ts";
export { archiveAndSignCut } from "./log-cut.ts";
export { CUT_ROWS_KEY, type CutRows, cutRows, parseCutRows } from "./cut-rows.ts";
export { costUsdOf } from "../events/metrics.ts";
export { type RefusalCode, commitRefusal } from "./commit-refusal.ts";
export { validateRetention } from "./retention-policy.ts";
export { directWriteEvent } from "./direct-write-event.ts";
export { GENESIS_HASH, type UnhashedEvent, canonicalEventParts, canonicalEventText, linkEvent, sha256Hex } from "./event-hash.ts";
export { type AuditKey, eventMac, macMatches, outboundDigest } from "./event-mac.ts";
export { IntentBatch } from "./intent-batch.ts";
export { ALL_TIERS, type PostureRow, postureEntryOf } from "./posture-rows.ts";
export { appliedStateChanges, firstStateDifference, replayStateChanges } from "./state-replay.ts";
export {
  type ApprovalHead,
  type PostureEvent,
  requireCurrentApprovals,
  requireCurrentPostures,
  staleApproval,
  stalePosture,
} from "./row-currency.ts";
export { approvalSealRow, intentSealRow, postureSealRow, rowSeal, type SealedTable, sealMatches, unsealedRow } from "./row-seal.ts";
export { expectedTransitions, type ProposalRow, replayBreak, type StoredTables, type TableBreak, tableBreak, type TransitionRow } from "./table-replay.ts";
// The engine's building blocks a backend extends: a cached state store, versioned values, a transition log, a live event feed.
export { CachedStateStore } from "../store/cached-state-store.ts";
export { type StateDiff, VersionedValues } from "../store/versioned-values.ts";
export { TransitionLog } from "../store/transition-log.ts";
export { EventFeed } from "../events/event-feed.ts";
