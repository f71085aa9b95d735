/**
 * The messages servers sharing a database send each other over
 * PostgreSQL's `NOTIFY` on one channel. Each is a wake-up — "intent X was
 * parked / decided", "a decision on fingerprint F was recorded" — except a
 * host event, which is the event itself. Anyone who can connect to the
 * database can `NOTIFY`, so with an audit key every message carries an
 * HMAC under it and one without a matching MAC is dropped; and even a
 * message that passes decides nothing, since the receiver reads decisions
 * from the sealed table. Payloads stay under PostgreSQL's 8000-byte limit:
 * ids and fingerprints are short, and a host event too large to send is
 * sent as its kind, time and ids only.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson, type JsonObject, type JsonValue } from "@car/ir";
import type { AuditKey } from "@car/engine/durable";

/** The one channel every server listens on. */
export const OVERSIGHT_CHANNEL = "car_oversight";

/** PostgreSQL refuses a payload of 8000 bytes or more; this leaves room for the envelope. */
export const MAX_PAYLOAD_BYTES = 7000;

export type OversightMessage =
  | { k: "parked"; id: string }
  | { k: "decided"; id: string }
  | { k: "approval"; fp: string }
  | { k: "host"; event: JsonObject }
  | { k: "subscribers" };

/** A message as sent: who sent it (`s`) and the MAC (`m`, absent without an audit key). */
type Envelope = OversightMessage & { s: string; m?: string };

function mac(key: AuditKey, body: JsonObject): string {
  return createHmac("sha256", key.key)
    .update(`car.oversight\n${canonicalJson(body)}`, "utf8")
    .digest("hex");
}

/**
 * The payload for `pg_notify`: `message` from `sender`, MAC'd under `key`.
 * A host event too large is trimmed; any other message too large (an
 * operator's made-up fingerprint no wait can have) is undefined: not sent.
 */
export function encodeMessage(key: AuditKey | undefined, sender: string, message: OversightMessage): string | undefined {
  const body = { ...message, s: sender } as unknown as JsonObject;
  const text = JSON.stringify(key === undefined ? body : { ...body, m: mac(key, body) });
  if (Buffer.byteLength(text, "utf8") <= MAX_PAYLOAD_BYTES) return text;
  return message.k === "host" && message.event["truncated"] !== true
    ? encodeMessage(key, sender, { k: "host", event: trimmedHostEvent(message.event) })
    : undefined;
}

/** A host event too large to send: its kind, its time and its short string fields (ids), marked `truncated`. */
function trimmedHostEvent(event: JsonObject): JsonObject {
  const out: JsonObject = { truncated: true };
  for (const [k, v] of Object.entries(event)) if (typeof v === "string" && v.length <= 200) out[k] = v;
  return out;
}

/** The message in `payload` and its sender, or undefined for anything malformed or not MAC'd under `key`. */
export function decodeMessage(key: AuditKey | undefined, payload: string): (OversightMessage & { s: string }) | undefined {
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(payload) as JsonValue;
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  const { m, ...body } = parsed as Partial<Envelope> & JsonObject;
  if (typeof body.s !== "string") return undefined;
  if (key !== undefined) {
    if (typeof m !== "string") return undefined;
    const expected = Buffer.from(mac(key, body));
    const actual = Buffer.from(m);
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  }
  switch (body.k) {
    case "parked":
    case "decided":
      return typeof body["id"] === "string" ? { k: body.k, id: body["id"], s: body.s } : undefined;
    case "approval":
      return typeof body["fp"] === "string" ? { k: "approval", fp: body["fp"], s: body.s } : undefined;
    case "host": {
      const event = body["event"];
      return typeof event === "object" && event !== null && !Array.isArray(event) ? { k: "host", event, s: body.s } : undefined;
    }
    case "subscribers":
      return { k: "subscribers", s: body.s };
    default:
      return undefined;
  }
}
