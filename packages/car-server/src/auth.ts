/**
 * The per-launch token that admits a WebSocket connection. It is minted fresh
 * at start, written `0600` under the state directory so same-user clients can
 * read it (a browser page cannot), and removed at shutdown so a stale token
 * never outlives the server that minted it.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
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

/** Where the token of a server using this state directory is written. */
export function tokenPath(carHome: string): string {
  return join(carHome, "auth-token");
}

/** The per-launch host token's file (the host-management role of `session.auth { host_token }`), beside the auth token's. */
export const HOST_TOKEN_FILE = "host-token";

/**
 * Writes the token atomically (a temporary file renamed over the old one), so
 * a client never reads a half-written token and a failed write leaves the
 * previous file as it was.
 */
export async function writeTokenFile(carHome: string, token: string, name?: string): Promise<string> {
  const path = name === undefined ? tokenPath(carHome) : join(carHome, name);
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await mkdir(carHome, { recursive: true, mode: 0o700 });
    await writeFile(temporary, `${token}\n`, { mode: 0o600, flag: "wx" });
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw new CarError("storage_error", `cannot write the auth token to ${path}: ${(err as Error).message}`, { path });
  }
  return path;
}

/** Removes the token file only if it still holds our token: a newer server may have replaced it. */
export async function removeTokenFile(path: string, token: string): Promise<void> {
  try {
    const current = (await readFile(path, "utf8")).trim();
    if (tokensMatch(token, current)) await rm(path, { force: true });
  } catch {
    // Already gone, or unreadable: nothing of ours to clean up.
  }
}
