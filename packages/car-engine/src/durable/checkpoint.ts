/**
 * Retention checkpoints. When old events are archived or dropped, the first
 * retained event's `prev_hash` points at an event that is gone; a checkpoint
 * records that event's seq and hash and is signed (HMAC-SHA256), so the
 * retained chain is anchored to a record the key holder wrote instead of to a
 * `prev_hash` taken on trust. Checkpoints chain too: each names the
 * signature of the one before it.
 *
 * Trust model: the signature proves a checkpoint was written by someone
 * holding the key. If the key sits in the same database (the default), a
 * person who can rewrite the database can also forge checkpoints — and can
 * rewrite the whole hash chain anyway. The chain and the checkpoints detect
 * corruption and edits by anyone without the key; they are not a defence
 * against the database's owner. Keeping the key in a separate file
 * (`auditKeyFile`, e.g. under CAR_HOME with mode 0600) separates the two
 * roles; anchoring the head hash outside the machine is the only defence
 * against a full rewrite.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { CarError, canonicalJson } from "@car/ir";
import type { JsonObject } from "@car/ir";
import { sha256Hex } from "./event-hash.ts";

/** The operator acts that cut the log: a retention bound, `events.truncate` (keep the newest N), `events.clear` (everything). */
export type LogCutAct = "retention" | "truncate" | "clear";

/** What a retention pass removed, and where the retained chain picks up. */
export interface Checkpoint {
  /** The last removed event: the retained chain's first `prev_hash` must equal `hash`. */
  seq: number;
  hash: string;
  /** The first event this pass removed. */
  first_removed_seq: number;
  removed: number;
  /** `archive`: the removed events were appended to `archive_path` as JSON lines; `truncate`: dropped. */
  mode: "archive" | "truncate";
  archive_path: string | null;
  /** Which operator act cut the log (DECISIONS §24); absent on checkpoints written before acts were named: `retention`. */
  act?: LogCutAct;
  /** The spend (`cost_usd` reported by agents) on the removed events, so `cumulative_cost_usd` outlives the cut; absent on older checkpoints: 0. */
  cost_usd?: number;
  /**
   * The digest of the cut's record of the trusted rows no retained event
   * touched (cut-rows.ts, kept beside the log), so rows whose events it
   * removed stay proven; absent on checkpoints written before cuts recorded
   * them.
   */
  rows_digest?: string;
  /** RFC 3339. */
  created_at: string;
  /** The previous checkpoint's signature; null for the first. */
  previous: string | null;
  /** Which key signed it (first 16 hex digits of the key's SHA-256), so a wrong key is named as such. */
  key_id: string;
}

export interface SignedCheckpoint {
  checkpoint: Checkpoint;
  signature: string;
}

/** A 32-byte HMAC key and its id. */
export interface CheckpointKey {
  key: Buffer;
  id: string;
}

/** The spend on every event the log's cuts removed: what `metricsSummary` adds to `cumulative_cost_usd`. */
export function cutCostUsd(checkpoints: readonly SignedCheckpoint[]): number {
  return checkpoints.reduce(
    (total, { checkpoint }) => total + (typeof checkpoint.cost_usd === "number" && Number.isFinite(checkpoint.cost_usd) ? checkpoint.cost_usd : 0),
    0,
  );
}

/** The spend carried by `store`'s cuts; 0 for a store that cannot cut its log (it keeps no checkpoints). */
export async function storeCutCostUsd(store: object | undefined): Promise<number> {
  const checkpoints = (store as { checkpoints?: () => SignedCheckpoint[] | Promise<SignedCheckpoint[]> } | undefined)?.checkpoints;
  return typeof checkpoints === "function" ? cutCostUsd(await checkpoints.call(store)) : 0;
}

export function checkpointKey(key: Buffer): CheckpointKey {
  return { key, id: sha256Hex(key.toString("hex")).slice(0, 16) };
}

export function newCheckpointKey(): CheckpointKey {
  return checkpointKey(randomBytes(32));
}

/** Reads a hex key file; undefined when there is none. */
export function readKeyFile(path: string): CheckpointKey | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CarError("storage_error", `cannot read the checkpoint key file '${path}': ${(error as Error).message}`);
  }
  return checkpointKey(parseHexKey(text, path));
}

/** Reads a hex key file, creating it (mode 0600) with a fresh key when missing. */
export function loadOrCreateKeyFile(path: string): CheckpointKey {
  const existing = readKeyFile(path);
  if (existing !== undefined) return existing;
  const fresh = newCheckpointKey();
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${fresh.key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    chmodSync(path, 0o600);
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return checkpointKey(parseHexKey(readFileSync(path, "utf8"), path));
    throw new CarError("storage_error", `cannot create the checkpoint key file '${path}': ${(error as Error).message}`);
  }
  return fresh;
}

export function parseHexKey(text: string, source: string): Buffer {
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new CarError("storage_error", `the checkpoint key in ${source} is not 64 hex digits`);
  return Buffer.from(hex, "hex");
}

export function signCheckpoint(checkpoint: Checkpoint, key: CheckpointKey): SignedCheckpoint {
  return { checkpoint, signature: hmac(checkpoint, key) };
}

/** Why a checkpoint does not verify under `key`, or undefined when it does. */
export function checkpointProblem(signed: SignedCheckpoint, key: CheckpointKey | undefined): string | undefined {
  if (key === undefined) return "the checkpoint key is not available, so the checkpoint cannot be checked";
  if (signed.checkpoint.key_id !== key.id) return `the checkpoint was signed with key ${signed.checkpoint.key_id}, not ${key.id}`;
  const expected = Buffer.from(hmac(signed.checkpoint, key), "hex");
  const actual = Buffer.from(signed.signature, "hex");
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return "the checkpoint signature does not match";
  return undefined;
}

function hmac(checkpoint: Checkpoint, key: CheckpointKey): string {
  return createHmac("sha256", key.key)
    .update(canonicalJson(checkpoint as unknown as JsonObject), "utf8")
    .digest("hex");
}
