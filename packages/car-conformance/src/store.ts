/**
 * `@car/conformance/store`: the RuntimeStore conformance suite for store
 * authors (see the README, "A conformance suite for stores"): the behaviour
 * every store backend — in-memory, `@car/store-sqlite`,
 * `@car/store-postgres`, or a third party's — must show. It is written
 * without a test framework, so it runs under any runner. The core checks go
 * through a real `Runtime`; the durable checks (reopen, hash chain,
 * interruption, dispatch intents, ledger, postures) run only for a harness
 * that declares `durable` and a store offering the part they check —
 * otherwise they are reported as skipped with the reason, never as passed.
 * One file per capability under `store/`.
 */
export type { StoreCheck, StoreCheckContext, StoreCheckResult, StoreCheckStatus, StoreConformanceReport, StoreHarness, StoreTamper } from "./store/check.ts";
export { runStoreCheck, runStoreConformance, STORE_CHECKS } from "./store/run.ts";
