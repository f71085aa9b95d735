/**
 * What a report says about the suite itself, so a verdict can be traced to
 * the exact scenarios and specification text that produced it.
 */
import { readFileSync } from "node:fs";

/** The @car/conformance version (read beside `src/` and `dist/`, where the published package keeps it). */
export const SUITE_VERSION: string = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

/**
 * The specification the scenarios cite: the seeds (car-spec.md,
 * agent-ir-spec.md as of their 2026-05-02 revision) and this project's
 * DECISIONS.md §1–§19. Bump it when scenarios follow a newer text.
 */
export const SPEC_REVISION = "car-spec.md + agent-ir-spec.md (2026-05-02), DECISIONS.md §1–§19";
