/**
 * The hash chain's link: every durable event stores `prev_hash` (the hash of
 * the event before it) and `hash` = lowercase SHA-256 of the event's RFC 8785
 * (JCS) form without `hash`. Shared by every durable backend so SQLite and
 * PostgreSQL chains are byte-for-byte the same and one verifier reads both.
 */
import * as crypto from "node:crypto";
import { CarError, canonicalJson } from "@car/ir";
import type { CarEvent } from "../events/event.ts";

/** `prev_hash` of the first event of a log that never lost its head. */
export const GENESIS_HASH = "0".repeat(64);

/** An event ready to be hashed: everything but `hash`, with its `prev_hash` set. */
export type UnhashedEvent = Omit<CarEvent, "hash"> & { prev_hash: string };

/** Strings JSON.stringify writes as they are, between quotes: nothing to escape, no surrogate (paired or lone). */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * JCS of a string is its JSON.stringify form once it is well formed (no
 * lone surrogate). Envelope strings (kinds, ids, timestamps, hex hashes) are
 * nearly always plain, and quoting those directly is about twice as fast.
 */
function jcsString(value: string): string {
  if (PLAIN.test(value)) return `"${value}"`;
  if (!value.isWellFormed()) throw new CarError("invalid_params", "an event string has no canonical JSON form (lone surrogate)");
  return JSON.stringify(value);
}

/**
 * The JCS text of an event without `hash`. The envelope's members are fixed,
 * so they are written here in JCS member order (`action_id`, `data`, `kind`,
 * `prev_hash`, `proposal_id`, `seq`, `timestamp`) and only `data` goes
 * through `canonicalJson`: this runs once per stored event, and
 * canonicalising the whole event costs about twice as much. A property test
 * pins it to `canonicalJson` of the event.
 */
export function canonicalEventText(event: UnhashedEvent, data?: string): string {
  const [head, mid, tail] = canonicalEventParts(event, data);
  return `${head}${jcsString(event.prev_hash)}${mid}${event.seq}${tail}`;
}

/**
 * The JCS text of an event without `hash`, in the three parts around the
 * JSON values of `prev_hash` and `seq`: what PostgreSQL fills in under its
 * log lock (log-chain.ts). `canonicalEventText` joins them. `data`: the
 * JCS text of `event.data` when the caller has it already (a stored row).
 */
export function canonicalEventParts(
  event: Omit<CarEvent, "seq" | "hash" | "prev_hash">,
  data: string = canonicalJson(event.data),
): [head: string, mid: string, tail: string] {
  const action = event.action_id === undefined ? "" : `"action_id":${jcsString(event.action_id)},`;
  const proposal = event.proposal_id === null ? "null" : jcsString(event.proposal_id);
  return [
    `{${action}"data":${data},"kind":${jcsString(event.kind)},"prev_hash":`,
    `,"proposal_id":${proposal},"seq":`,
    `,"timestamp":${jcsString(event.timestamp)}}`,
  ];
}

/** Lowercase hex SHA-256 of a canonical event text. */
export function sha256Hex(text: string): string {
  return oneShotHash !== undefined ? oneShotHash("sha256", text, "hex") : crypto.createHash("sha256").update(text, "utf8").digest("hex");
}

/** `crypto.hash` (Node ≥ 20.12) skips the Hash object: measurably cheaper per event. */
const oneShotHash = (crypto as { hash?: typeof crypto.hash }).hash;

/**
 * Links `event` after `prevHash`: sets its `prev_hash` and `hash` in place
 * (the stored record is the object the log handed out) and returns the JCS
 * text of its `data`, which the hashed text contains verbatim — what a
 * backend keeping the envelope in columns stores (the SQLite row,
 * event-row.ts), so `data` is serialised once.
 */
export function linkEvent(event: CarEvent, prevHash: string): string {
  event.prev_hash = prevHash;
  const data = canonicalJson(event.data);
  event.hash = sha256Hex(canonicalEventText(event as UnhashedEvent, data));
  return data;
}
