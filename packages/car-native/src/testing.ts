/**
 * For the test suites that exercise the native path (here and in
 * @car/verify): a vitest global setup that builds the addon when cargo is
 * present and the binary is not, and the one rule for skipping — only on a
 * machine without cargo and outside CI. Under CI=true a missing addon fails.
 */
import { buildNative, cargoAvailable } from "./build.ts";
import { nativeStatus, reloadNative } from "./index.ts";

export function setupNative(): void {
  if (nativeStatus().available || !cargoAvailable()) return;
  const built = buildNative();
  if (!built.ok) throw new Error(`building @car/native failed:\n${built.output}`);
  reloadNative();
}

export function nativeTestsSkipped(): boolean {
  if (nativeStatus().available) return false;
  return process.env["CI"] !== "true" && !cargoAvailable();
}
