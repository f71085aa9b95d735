/**
 * The original `car-server`'s flags that map onto this server, each either
 * honoured exactly or refused with a reason (DECISIONS §25: no setting is
 * accepted and ignored):
 *
 * - `--auth-token-file` / `CAR_AUTH_TOKEN_FILE`: the token is read from a
 *   file and the file deleted at start-up, as the reference says, so the
 *   secret does not linger where it was handed over. A file others may read
 *   has already leaked it, so it is refused, as is an empty one.
 * - `--journal-dir`: the original keeps its event journals there; here the
 *   event log lives in the database, so the directory holds the database
 *   (`DIR/car.db`). A path starting `~/.car/` names the state root (CAR_HOME),
 *   as the reference specifies.
 * - `--no-approvals` / `CAR_NO_APPROVALS`: refused. Every session is gated
 *   (DECISIONS §16) and `full_access` is always a human's decision; a flag
 *   that switched that off cannot be honoured, and ignoring it would be a lie.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync, unlinkSync, constants as fs } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { CarError } from "@car/ir";
import { resolveCarHome } from "./car-home.ts";

/** A token file larger than this is not a token file. */
export const MAX_TOKEN_FILE_BYTES = 4096;

/** What `--no-approvals` would mean, and what to use instead. */
export const NO_APPROVALS_REFUSAL =
  "is not offered: every session is gated at its standing tier and full_access is always a human's decision (DECISIONS §16), so approvals cannot be switched off. To let sessions do more without asking: --tier full_access with recorded approvals (car approvals approve), or a default posture (car approvals default trusting)";

function refused(message: string, path?: string): CarError {
  return new CarError("invalid_params", message, path === undefined ? {} : { path });
}

/**
 * Reads the token from `path` and deletes the file. Refused (nothing
 * deleted): a missing or unreadable file, anything but a regular file, a
 * file group or others may read or write (it must be mode 0600 or
 * stricter), one over 4 KiB, and one that is empty or only whitespace.
 */
export function readAuthTokenFile(path: string, source: string): string {
  if (path === "") throw refused(`${source} must not be empty`);
  let fd: number;
  try {
    // O_NOFOLLOW: the file handed over is this path itself, not whatever a symlink there points to.
    fd = openSync(path, fs.O_RDONLY | fs.O_NOFOLLOW | fs.O_NONBLOCK);
  } catch (error) {
    throw refused(`${source} ${path}: cannot open it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, path);
  }
  let text: string;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refused(`${source} ${path}: not a regular file`, path);
    if ((stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(3, "0");
      throw refused(`${source} ${path}: mode ${mode} lets others read or change the token; make it readable by its owner only (chmod 600)`, path);
    }
    if (stat.size > MAX_TOKEN_FILE_BYTES)
      throw refused(`${source} ${path}: ${stat.size} bytes is too large for a token file (at most ${MAX_TOKEN_FILE_BYTES})`, path);
    const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES + 1);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    text = buffer.subarray(0, read).toString("utf8");
  } finally {
    closeSync(fd);
  }
  const token = text.trim();
  if (token === "") throw refused(`${source} ${path}: the file is empty; write the token in it`, path);
  if (/\s/.test(token)) throw refused(`${source} ${path}: the token must be one line without spaces`, path);
  try {
    unlinkSync(path);
  } catch (error) {
    throw refused(
      `${source} ${path}: read, but cannot delete it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the token would stay on disk`,
      path,
    );
  }
  return token;
}

/**
 * The database `--journal-dir DIR` names: `DIR/car.db`, the directory
 * created (0700) if missing. `~/.car/…` and `~/.car` name CAR_HOME, not the
 * home directory (the reference's rule); a relative path is the working
 * directory's.
 */
export function journalDirDatabase(dir: string, env: NodeJS.ProcessEnv): string {
  if (dir === "") throw refused("--journal-dir must not be empty");
  let absolute: string;
  if (dir === "~/.car" || dir.startsWith("~/.car/")) absolute = join(resolveCarHome(env), dir.slice("~/.car".length));
  else if (dir === "~" || dir.startsWith("~/"))
    throw refused(`--journal-dir '${dir}': '~' is not expanded here; give an absolute path (only ~/.car/… is read, as CAR_HOME)`);
  else absolute = isAbsolute(dir) ? dir : resolve(dir);
  try {
    mkdirSync(absolute, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw refused(`--journal-dir ${absolute}: cannot create it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, absolute);
  }
  return join(absolute, "car.db");
}

/** `CAR_NO_APPROVALS`: unset, empty or `0` is off; anything else asks for what cannot be honoured. */
export function noApprovalsRequested(flag: boolean | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag === true) return "--no-approvals";
  const value = env["CAR_NO_APPROVALS"];
  if (value === undefined || value === "" || value === "0") return undefined;
  return `CAR_NO_APPROVALS=${value}`;
}
