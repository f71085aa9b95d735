/**
 * A journal file — the runtime's events as JSON lines, as `car run --events`
 * and `car audit query --json` write them — read for `car replay <JOURNAL>`
 * (the reference's form). What it records is acted on only once every event
 * vouches for itself: each carries the hash of its canonical form, and each
 * event that follows its predecessor in the log (the next seq) links to its
 * hash. A journal of one proposal skips other proposals' events; those gaps
 * are counted, not refused. Without the audit key, a journal is vouched for
 * against accidental damage only (whoever rewrites it can rehash it): the
 * database form (`car replay ID`) checks MACs and anchors too.
 */
import { CarError, getOwn, isJsonObject, type JsonValue } from "@car/ir";
import type { CarEvent } from "@car/engine";
import { canonicalEventText, sha256Hex } from "@car/engine/durable";

export interface Journal {
  events: CarEvent[];
  /** Places where the journal skips seqs (events of the log it does not hold). */
  gaps: number;
}

function broken(path: string, line: number, why: string): CarError {
  return new CarError("chain_broken", `cannot replay ${path}: line ${line}: ${why}, so nothing it records is replayed`, { line });
}

export function readJournal(text: string, path: string): Journal {
  const events: CarEvent[] = [];
  let gaps = 0;
  for (const [i, raw] of text.split("\n").entries()) {
    if (raw.trim() === "") continue;
    const line = i + 1;
    let value: JsonValue;
    try {
      value = JSON.parse(raw) as JsonValue;
    } catch (error) {
      throw new CarError("invalid_params", `${path}:${line}: not JSON: ${(error as Error).message}`);
    }
    if (
      !isJsonObject(value) ||
      typeof getOwn(value, "kind") !== "string" ||
      typeof getOwn(value, "seq") !== "number" ||
      !isJsonObject(getOwn(value, "data") ?? null)
    )
      throw new CarError("invalid_params", `${path}:${line}: not a runtime event (seq, kind, data)`);
    const event = value as unknown as CarEvent;
    if (typeof event.hash !== "string" || typeof event.prev_hash !== "string") throw broken(path, line, "the event carries no hash, so nothing vouches for it");
    const { hash, ...unhashed } = event;
    if (sha256Hex(canonicalEventText(unhashed as CarEvent & { prev_hash: string })) !== hash)
      throw broken(path, line, `event seq ${event.seq}'s hash does not match its content`);
    const previous = events.at(-1);
    if (previous !== undefined) {
      if (event.seq <= previous.seq) throw broken(path, line, `seq ${event.seq} does not follow seq ${previous.seq}`);
      if (event.seq === previous.seq + 1 && event.prev_hash !== previous.hash)
        throw broken(path, line, `event seq ${event.seq} does not link to seq ${previous.seq}`);
      if (event.seq !== previous.seq + 1) gaps++;
    }
    events.push(event);
  }
  if (events.length === 0) throw new CarError("invalid_params", `${path} holds no events`);
  return { events, gaps };
}
