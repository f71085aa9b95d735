/**
 * `@car/conformance/store`: the RuntimeStore conformance suite for store
 * authors (see the README, "A conformance suite for stores"). It lives in
 * `@car/engine`, whose own backends pass it; this entry makes it part of
 * RuntimeBench's public surface. No test framework is needed to run it.
 */
export {
  runStoreCheck,
  runStoreConformance,
  STORE_CHECKS,
  type StoreCheck,
  type StoreCheckContext,
  type StoreCheckResult,
  type StoreCheckStatus,
  type StoreConformanceReport,
  type StoreHarness,
} from "@car/engine/store-conformance";
