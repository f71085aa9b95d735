/**
 * Runs the store checks: each on a fresh harness, skipped with the reason
 * when it does not apply (a durable check on a store that is not durable,
 * or lacks the part it uses), never passed in that case.
 */
import { manualClock } from "@car/ir";
import { Runtime, type RuntimeStore } from "@car/engine";
import { APPROVAL_CHECKS } from "./approvals.ts";
import { CHAIN_CHECKS } from "./chain.ts";
import {
  type DurablePart,
  type MaybePromise,
  START,
  type StoreCheck,
  type StoreCheckResult,
  type StoreCheckStatus,
  type StoreConformanceReport,
  type StoreHarness,
} from "./check.ts";
import { CORE_CHECKS } from "./core.ts";
import { DURABLE_CHECKS } from "./durable.ts";
import { INTENT_CHECKS } from "./intents.ts";
import { POSTURE_CHECKS } from "./postures.ts";
import { RECOVERY_CHECKS } from "./recovery.ts";
import { LOG_CUT_CHECKS } from "./log-cuts.ts";
import { TABLE_CHECKS } from "./tables.ts";
import { RUN_CHECKS } from "./runs.ts";

/** Every check, core first, then one capability after another. */
export const STORE_CHECKS: readonly StoreCheck[] = [
  ...CORE_CHECKS,
  ...DURABLE_CHECKS,
  ...CHAIN_CHECKS,
  ...RECOVERY_CHECKS,
  ...INTENT_CHECKS,
  ...APPROVAL_CHECKS,
  ...POSTURE_CHECKS,
  ...TABLE_CHECKS,
  ...LOG_CUT_CHECKS,
  ...RUN_CHECKS,
];

/** Why `check` does not apply to this harness and store, or undefined when it does. */
function skipReason(check: StoreCheck, harness: StoreHarness, store: RuntimeStore): string | undefined {
  if (check.durable === undefined) return undefined;
  if (!harness.durable) return "the store is not durable (harness.durable is false): reopen, chain, interruption, ledger and posture persistence do not apply";
  const harnessParts: Partial<Record<DurablePart, boolean>> = {
    tamper: harness.tamper !== undefined,
  };
  const missing = check.durable.filter(
    (part) => harnessParts[part] === false || (!(part in harnessParts) && (store as unknown as Record<string, unknown>)[part] === undefined),
  );
  return missing.length > 0 ? `the ${missing.some((p) => p in harnessParts) ? "harness or store" : "store"} offers no ${missing.join(", ")}` : undefined;
}

/** Runs one check on a fresh harness: passed, failed (with the error) or skipped (with the reason). Never throws. */
export async function runStoreCheck(check: StoreCheck, makeHarness: () => MaybePromise<StoreHarness>): Promise<StoreCheckResult> {
  const started = performance.now();
  const done = (status: StoreCheckStatus, extra: { reason?: string; error?: string } = {}): StoreCheckResult => ({
    name: check.name,
    status,
    ...extra,
    duration_ms: Math.round(performance.now() - started),
  });
  const opened: RuntimeStore[] = [];
  let harness: StoreHarness | undefined;
  const clock = manualClock(START);
  const closeAll = async (): Promise<void> => {
    for (const store of opened.splice(0)) await store.close?.();
  };
  try {
    harness = await makeHarness();
    const h = harness;
    const open = async (): Promise<RuntimeStore> => {
      const store = await h.open(clock);
      opened.push(store);
      return store;
    };
    const probe = await open();
    const reason = skipReason(check, h, probe);
    await closeAll();
    if (reason !== undefined) return done("skipped", { reason });
    const runtime = async (): Promise<{ rt: Runtime; store: RuntimeStore }> => {
      const store = await open();
      const rt = new Runtime({ store, clock });
      rt.registerTool("ok", () => "done");
      rt.registerTool("boom", () => {
        throw new Error("boom");
      });
      return { rt, store };
    };
    await check.run({ clock, open, closeAll, runtime, tamper: h.tamper });
    return done("passed");
  } catch (err) {
    return done("failed", { error: err instanceof Error ? err.message : String(err) });
  } finally {
    await closeAll().catch(() => {});
    await harness?.dispose();
  }
}

/** Runs every check (or those whose name contains one of `only`) against fresh harnesses, one at a time. */
export async function runStoreConformance(
  store: string,
  makeHarness: () => MaybePromise<StoreHarness>,
  options: { only?: readonly string[] } = {},
): Promise<StoreConformanceReport> {
  const only = options.only ?? [];
  const results: StoreCheckResult[] = [];
  for (const check of STORE_CHECKS) {
    if (only.length > 0 && !only.some((o) => check.name.includes(o))) continue;
    results.push(await runStoreCheck(check, makeHarness));
  }
  const count = (s: StoreCheckStatus): number => results.filter((r) => r.status === s).length;
  return { store, passed: count("passed"), failed: count("failed"), skipped: count("skipped"), results };
}
