/**
 * The per-launch token that admits a WebSocket connection. It is minted fresh
 * at start (or taken from `--token` / `CAR_AUTH_TOKEN`), written `0600` under
 * the state directory so same-user clients can read it (a browser page
 * cannot), and removed at shutdown so a stale token never outlives the server
 * that minted it.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CarError } from "@car/ir";

/** 32 random bytes as base64url without padding: 43 characters. */
export function generateToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Constant-time comparison; lengths are checked first (the length is not secret). */
export function tokensMatch(expected: string, supplied: string): boolean {
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(supplied, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Who a connection acts for, once authenticated (DECISIONS §21): its agent
 * id, else the token it authenticated with (as a digest: the key is stored
 * in the log), else — auth off — the one anonymous client. Session-scoped
 * trace rules and rate limits key on this, not on the socket.
 */
export function agentKeyOf(agentId: string | undefined, token: string | undefined): string {
  if (agentId !== undefined) return `agent:${agentId}`;
  if (token !== undefined) return `token:${createHash("sha256").update(token).digest("hex").slice(0, 32)}`;
  return "anonymous";
}

/** Where clients look first for the token of the server using this state directory. */
export function tokenPath(carHome: string): string {
  return join(carHome, "auth-token");
}

/** The per-launch host token's files (the host-management role of `session.auth { host_token }`), beside the auth token's. */
export const HOST_TOKEN_FILE = "host-token";

/** Where the token of the server listening on `port` is written: one file per port, so servers sharing a CAR_HOME never overwrite each other's. */
export function portTokenPath(carHome: string, port: number, base = "auth-token"): string {
  return join(carHome, `${base}.${port}`);
}

/**
 * Writes `text` to `path` atomically (a temporary file renamed over the
 * old one), so a client never reads a half-written token and a failed write
 * leaves the previous file as it was.
 */
async function writeAtomically(carHome: string, path: string, token: string): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await mkdir(carHome, { recursive: true, mode: 0o700 });
    await writeFile(temporary, `${token}\n`, { mode: 0o600, flag: "wx" });
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw new CarError("storage_error", `cannot write the auth token to ${path}: ${(err as Error).message}`, { path });
  }
}

async function readTokenFile(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch {
    return undefined;
  }
}

/** Whether `token` is the token of a server still running on this CAR_HOME: its per-port file still holds it. */
async function heldByARunningServer(carHome: string, token: string, base: string): Promise<boolean> {
  let names: string[];
  try {
    names = await readdir(carHome);
  } catch {
    return false;
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`) || !/^\d+$/.test(name.slice(base.length + 1))) continue;
    const held = await readTokenFile(join(carHome, name));
    if (held !== undefined && tokensMatch(token, held)) return true;
  }
  return false;
}

/**
 * Writes the token of the server on `port`: always to its own
 * `auth-token.<port>`, and to `auth-token` (where clients look first)
 * unless that file holds the token of another server still running on this
 * CAR_HOME — a second server never takes the first one's file away. A file
 * left by a server that was killed (its per-port file gone or replaced) is
 * taken over. Answers every file written, the shared one first. `base`
 * names the kind of token (`auth-token`, or `host-token` for the host role).
 */
export async function writeTokenFiles(carHome: string, port: number, token: string, base = "auth-token"): Promise<string[]> {
  const own = portTokenPath(carHome, port, base);
  await writeAtomically(carHome, own, token);
  const shared = join(carHome, base);
  const current = await readTokenFile(shared);
  if (current !== undefined && current !== "" && !tokensMatch(token, current) && (await heldByARunningServer(carHome, current, base))) return [own];
  await writeAtomically(carHome, shared, token);
  return [shared, own];
}

/** Removes a token file only if it still holds our token: another server may have replaced it. */
export async function removeTokenFile(path: string, token: string): Promise<void> {
  const current = await readTokenFile(path);
  if (current !== undefined && tokensMatch(token, current)) await rm(path, { force: true });
}
