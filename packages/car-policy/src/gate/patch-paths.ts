/**
 * Codex `apply_patch`: the file paths a patch touches, resolved the way the
 * filesystem will see them, so a rule on `/project/.env` also refuses
 * `./.env`, `../project/.env` and a path through a symlink.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, sep } from "node:path";
import { lexicalPath } from "../lexical-path.ts";

const HEADERS = ["*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "];

/** Every path a patch adds, deletes, updates or moves to. */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const header = HEADERS.find((h) => line.startsWith(h));
    if (header !== undefined) paths.push(line.slice(header.length).trim());
  }
  return paths;
}

/**
 * Resolves the longest existing ancestor through symlinks, then joins the
 * missing rest lexically (an added file need not exist yet), dropping `.` and
 * applying `..`.
 */
export function resolvePatchPath(cwd: string, path: string): string {
  const joined = isAbsolute(path) ? path : `${cwd.replace(/[\\/]+$/, "")}${sep}${path}`;
  const parts = joined.split(/[\\/]+/);
  let resolved = joined;
  for (let n = parts.length; n >= 1; n--) {
    const ancestor = parts.slice(0, n).join(sep) || sep;
    let realAncestor: string;
    try {
      realAncestor = realpathSync(ancestor);
    } catch {
      continue;
    }
    resolved = [realAncestor, ...parts.slice(n)].join(sep);
    break;
  }
  return lexicalPath(resolved.startsWith(sep) ? resolved : `${sep}${resolved}`);
}
