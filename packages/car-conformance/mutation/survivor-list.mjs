// @ts-check
/**
 * Prints MUTATION.md's list of classified survivors from `classified.json`,
 * so the list a vendor reads is the one the scorer applies, never a copy
 * edited by hand:
 *
 *   node mutation/survivor-list.mjs
 */
import { readFileSync } from "node:fs";

/** @type {{ file: string; from: number; to: number; kind: string; reason: string; mutators?: string[] }[]} */
const entries = JSON.parse(readFileSync(new URL("classified.json", import.meta.url), "utf8")).entries;

for (const e of entries) {
  const [, pkg, path] = /^packages\/car-([^/]+)\/src\/(.+)$/.exec(e.file) ?? [];
  const lines = e.from === e.to ? `${e.from}` : `${e.from}–${e.to}`;
  const mutators = e.mutators === undefined ? "" : ` (${e.mutators.join(", ")})`;
  console.log(`- @car/${pkg} \`${path}\` ${lines}${mutators}, **${e.kind}**: ${e.reason}`);
}
