/**
 * Loads every `*.toml` (any case: `*.TOML` too) in a directory, in sorted
 * file-name order, into one merged rule set. A missing directory is an empty
 * set (most projects have none); a directory that is present but cannot be
 * read — unreadable, or a symlink to nothing — fails the whole load, as does
 * anything malformed or anything that is not a regular file (a FIFO, a
 * device). A file may start with a UTF-8 byte-order mark.
 */
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readdirSync, readSync, type Stats } from "node:fs";
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
    merged.merge(parsePolicyFile(file, readPolicyFile(file)));
  }
  return merged;
}

/** The largest policy file read: far beyond any real one, and small enough that reading it cannot exhaust memory. */
export const MAX_POLICY_FILE_BYTES = 1024 * 1024;

/**
 * A policy file's text. Only a regular file is read: a FIFO would block the
 * reader forever and a device (`/dev/zero`, or a symlink to one) never ends,
 * so either is refused — naming the file — without reading a byte. The file
 * is opened non-blocking and checked on the open descriptor, so it cannot be
 * swapped for a FIFO between the check and the read.
 */
export function readPolicyFile(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw new PolicyLoadError(file, `cannot be read: ${(err as Error).message}`, { cause: err });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new PolicyLoadError(file, `is not a regular file (${fileKind(stat)}), so it is refused without being read`);
    if (stat.size > MAX_POLICY_FILE_BYTES) throw new PolicyLoadError(file, `is ${stat.size} bytes, over the ${MAX_POLICY_FILE_BYTES} a policy file may hold`);
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < stat.size) {
      const n = readSync(fd, buffer, read, stat.size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read).toString("utf8");
  } catch (err) {
    if (err instanceof PolicyLoadError) throw err;
    throw new PolicyLoadError(file, `cannot be read: ${(err as Error).message}`, { cause: err });
  } finally {
    closeSync(fd);
  }
}

function fileKind(stat: Stats): string {
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  if (stat.isDirectory()) return "a directory";
  return "not a file";
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
