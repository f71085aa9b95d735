/**
 * Loads every `*.toml` (any case: `*.TOML` too) in a directory, in sorted
 * file-name order, into one merged rule set. A missing directory is an empty
 * set (most projects have none); a directory that is present but cannot be
 * read — unreadable, or a symlink to nothing — fails the whole load, as does
 * anything malformed. A file may start with a UTF-8 byte-order mark.
 */
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { PolicyLoadError } from "./policy-load-error.ts";
import { parsePolicyFile } from "./parse-policy-file.ts";
import { PolicyRules } from "./policy-rules.ts";

export function loadPolicyDir(dir: string): PolicyRules {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((e) => isPolicyFileName(e.name) && !e.isDirectory())
      .map((e) => e.name)
      .sort(compareCodeUnits);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && !isDangling(dir) && !isDangling(dirname(dir))) return new PolicyRules();
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

/** `*.toml` in any case. */
export function isPolicyFileName(name: string): boolean {
  return name.toLowerCase().endsWith(".toml");
}

/** A symlink whose target is gone: present, but nothing can be read through it. */
export function isDangling(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink() && !existsSync(path);
  } catch {
    return false;
  }
}

/** Byte-order sort, the same on every platform and locale. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
