/**
 * The chain's key. Each stored event carries `mac` = HMAC-SHA256(audit key,
 * its `hash`). The hash chain alone is public arithmetic: anyone who can
 * write the database can edit an event and recompute every later hash. The
 * MAC can only be recomputed by someone holding the audit key, which lives
 * outside the database (`<CAR_HOME>/audit.key`, mode 0600, created on first
 * use) — so a rewrite by a database writer without the key shows at the
 * first edited event. Removing the newest events (or restoring an older
 * copy of the database) leaves every remaining MAC valid; only an anchor
 * kept outside the database (anchor.ts) catches that.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { CheckpointKey } from "./checkpoint.ts";

/** The audit key: one HMAC key signs retention checkpoints and event MACs. */
export type AuditKey = CheckpointKey;

export function eventMac(key: AuditKey, hash: string): string {
  return createHmac("sha256", key.key).update(hash, "utf8").digest("hex");
}

export function macMatches(key: AuditKey, hash: string, mac: string): boolean {
  const expected = Buffer.from(eventMac(key, hash), "hex");
  const actual = Buffer.from(mac, "hex");
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A digest that leaves the process (a span's parameter digest), keyed and kept apart from event MACs by its prefix. */
export function outboundDigest(key: AuditKey, text: string): string {
  return createHmac("sha256", key.key).update(`car.outbound\n${text}`, "utf8").digest("hex");
}
