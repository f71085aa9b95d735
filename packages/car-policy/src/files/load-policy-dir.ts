/**
 * Loads every `*.toml` in a directory, in sorted file-name order, into one
 * merged rule set. A missing directory is an empty set (most projects have
 * none); anything unreadable or malformed fails the whole load.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PolicyLoadError } from "./policy-load-error.ts";
import { parsePolicyFile } from "./parse-policy-file.ts";
import { PolicyRules } from "./policy-rules.ts";

export function loadPolicyDir(dir: string): PolicyRules {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.name.endsWith(".toml") && !e.isDirectory())
      .map((e) => e.name)
      .sort(compareCodeUnits);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return new PolicyRules();
    throw new PolicyLoadError(dir, `the policy directory cannot be read: ${(err as Error).message}`, { cause: err });
  }
  const merged = new PolicyRules();
  for (const name of names) {
    const file = join(dir, name);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new PolicyLoadError(file, `cannot be read: ${(err as Error).message}`, { cause: err });
    }
    merged.merge(parsePolicyFile(file, text));
  }
  return merged;
}

/** Byte-order sort, the same on every platform and locale. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
