/**
 * For the test suites that exercise the native path (here and in
 * @car/verify): a vitest global setup that builds the addon when cargo is
 * present and the binary is not, and the one rule for skipping — only on a
 * machine without cargo and outside CI. Under CI=true a missing addon fails.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildNative, cargoAvailable } from "./build.ts";
import { nativeStatus, reloadNative } from "./index.ts";
import { PACKAGE_DIR } from "./paths.ts";

/** Whether a Rust source changed since the binary was built (checked before loading it: a loaded library cannot be replaced). */
function binaryStale(): boolean {
  const built = readdirSync(PACKAGE_DIR).filter((f) => f.endsWith(".node"));
  if (built.length === 0) return false;
  const binary = Math.min(...built.map((f) => statSync(join(PACKAGE_DIR, f)).mtimeMs));
  const sources = [
    "Cargo.toml",
    ...readdirSync(join(PACKAGE_DIR, "src"))
      .filter((f) => f.endsWith(".rs"))
      .map((f) => join("src", f)),
  ];
  return sources.some((f) => statSync(join(PACKAGE_DIR, f)).mtimeMs > binary);
}

export function setupNative(): void {
  if (!cargoAvailable()) return;
  if (!binaryStale() && nativeStatus().available) return;
  const built = buildNative();
  if (!built.ok) throw new Error(`building @car/native failed:\n${built.output}`);
  reloadNative();
}

export function nativeTestsSkipped(): boolean {
  if (nativeStatus().available) return false;
  return process.env["CI"] !== "true" && !cargoAvailable();
}
