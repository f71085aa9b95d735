/**
 * Reads the capability files shipped in `scenarios/` (or another directory
 * a vendor points at, e.g. to add their own). Files are read in name order
 * so reports are stable; `scenario.schema.json` is the format, not a file
 * of scenarios.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CapabilityFile } from "./scenario.ts";

/** The directory of the bundled scenarios (beside `src/` and `dist/`). */
export const SCENARIOS_DIR = fileURLToPath(new URL("../scenarios/", import.meta.url));

export const SCHEMA_FILE = "scenario.schema.json";

/** Every capability file of `dir`, parsed (not validated: the schema test does that for the bundled ones). */
export function loadCapabilities(dir: string = SCENARIOS_DIR): CapabilityFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json") && f !== SCHEMA_FILE)
    .sort()
    .map((f) => {
      const text = readFileSync(join(dir, f), "utf8");
      try {
        return JSON.parse(text) as CapabilityFile;
      } catch (err) {
        throw new Error(`${join(dir, f)} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
}
