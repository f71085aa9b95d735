/**
 * The hash chain's link: every durable event stores `prev_hash` (the hash of
 * the event before it) and `hash` = lowercase SHA-256 of the event's RFC 8785
 * (JCS) form without `hash`. Shared by every durable backend so SQLite and
 * PostgreSQL chains are byte-for-byte the same and one verifier reads both.
 */
import * as crypto from "node:crypto";
import { CarError, canonicalJson } from "@car/ir";
import type { JsonObject, JsonValue } from "@car/ir";
import type { CarEvent } from "../../events/event.ts";

/** `prev_hash` of the first event of a log that never lost its head. */
export const GENESIS_HASH = "0".repeat(64);

/** An event ready to be hashed: everything but `hash`, with its `prev_hash` set. */
export type UnhashedEvent = Omit<CarEvent, "hash"> & { prev_hash: string };

/** JCS of a string is its JSON.stringify form once it is well formed (no lone surrogate). */
function jcsString(value: string): string {
  if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) throw new CarError("invalid_params", "an event string has no canonical JSON form (lone surrogate)");
  return JSON.stringify(value);
}

/**
 * JCS of an event's `data`. Engine events carry small objects of strings,
 * numbers and booleans; those members are written directly (JCS orders
 * members by UTF-16 code units, which is `Array.prototype.sort`'s default
 * order, and writes finite numbers and literals as JSON.stringify does);
 * anything nested goes through `canonicalJson`.
 */
function canonicalData(data: JsonObject): string {
  const keys = Object.keys(data);
  if (keys.length === 0) return "{}";
  keys.sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const value = data[key] as JsonValue;
    let text: string;
    if (typeof value === "string") text = jcsString(value);
    else if (value === null || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) text = JSON.stringify(value);
    else if (typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0) text = "{}";
    else text = canonicalJson(value);
    out += `${i === 0 ? "" : ","}${jcsString(key)}:${text}`;
  }
  return `${out}}`;
}

/**
 * The JCS text of an event without `hash`. The envelope's members are fixed,
 * so they are written here in JCS member order (`action_id`, `data`, `kind`,
 * `prev_hash`, `proposal_id`, `seq`, `timestamp`) and only `data` goes
 * through the canonicaliser (`canonicalData`): this runs once per stored
 * event, and the generic canonicaliser over the whole event costs several
 * times as much. A property test pins it to `canonicalJson` of the event.
 */
export function canonicalEventText(event: UnhashedEvent): string {
  const data = canonicalData(event.data);
  const action = event.action_id === undefined ? "" : `"action_id":${jcsString(event.action_id)},`;
  const proposal = event.proposal_id === null ? "null" : jcsString(event.proposal_id);
  return `{${action}"data":${data},"kind":${jcsString(event.kind)},"prev_hash":${jcsString(event.prev_hash)},"proposal_id":${proposal},"seq":${event.seq},"timestamp":${jcsString(event.timestamp)}}`;
}

/** Lowercase hex SHA-256 of a canonical event text. */
export function sha256Hex(text: string): string {
  return oneShotHash !== undefined ? oneShotHash("sha256", text, "hex") : crypto.createHash("sha256").update(text, "utf8").digest("hex");
}

/** `crypto.hash` (Node ≥ 20.12) skips the Hash object: measurably cheaper per event. */
const oneShotHash = (crypto as { hash?: typeof crypto.hash }).hash;

/**
 * Links `event` after `prevHash`: sets its `prev_hash` and `hash` in place
 * (the stored record is the object the log handed out) and returns its
 * canonical text, which is what a backend stores.
 */
export function linkEvent(event: CarEvent, prevHash: string): string {
  event.prev_hash = prevHash;
  const text = canonicalEventText(event as UnhashedEvent);
  event.hash = sha256Hex(text);
  return text;
}
