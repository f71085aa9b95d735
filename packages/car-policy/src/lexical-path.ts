/**
 * A path with `.`, `..` and repeated separators resolved on its text alone
 * (nothing is read from disk), so spellings of one path compare equal:
 * `src/../.env` is `.env`, `//.env` and `/./.env` are `/.env`. An absolute
 * path stays absolute (`..` stops at `/`); a relative one keeps the `..`
 * that climb above its start.
 */
export function lexicalPath(path: string): string {
  const absolute = path.startsWith("/");
  const out: string[] = [];
  for (const part of path.split(/[\\/]+/)) {
    if (part === "" || part === ".") continue;
    if (part !== "..") out.push(part);
    else if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else if (!absolute) out.push(part);
  }
  const joined = out.join("/");
  return absolute ? `/${joined}` : joined === "" ? "." : joined;
}
