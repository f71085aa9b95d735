/**
 * The journal reader `car replay <JOURNAL>` trusts: a hashed, linked chain
 * (built with the durable stores' own `linkEvent`) is read whole or as any
 * ordered selection of its events, with the gaps counted; one changed value
 * anywhere, a reordering, or a missing hash is refused with `chain_broken`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isCarError } from "@car/ir";
import type { CarEvent } from "@car/engine";
import { GENESIS_HASH, linkEvent } from "@car/engine/durable";
import { readJournal } from "./journal.ts";

function chain(values: readonly number[]): CarEvent[] {
  let prev = GENESIS_HASH;
  return values.map((value, i) => {
    const event: CarEvent = {
      seq: i + 1,
      kind: "state_changed",
      proposal_id: i % 2 === 0 ? "p" : null,
      ...(i % 3 === 0 ? { action_id: `a${i}` } : {}),
      timestamp: "2026-12-03T00:00:00.000Z",
      data: { key: `k${i}`, op: "set", value, version: i + 1 },
    };
    linkEvent(event, prev);
    prev = event.hash!;
    return event;
  });
}

const lines = (events: readonly CarEvent[]) => events.map((e) => JSON.stringify(e)).join("\n");
const VALUES = fc.array(fc.integer(), { minLength: 2, maxLength: 12 });

function code(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return isCarError(error) ? error.code : "not a CarError";
  }
}

describe("readJournal", () => {
  it("reads any ordered selection of a chain, counting the stretches it skips", () => {
    fc.assert(
      fc.property(VALUES, fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }), (values, keep) => {
        const events = chain(values);
        const kept = events.filter((_, i) => keep[i] || i === 0);
        const gaps = kept.slice(1).filter((e, i) => e.seq !== kept[i]!.seq + 1).length;
        const journal = readJournal(lines(kept), "j.jsonl");
        expect(journal.events.map((e) => e.seq)).toEqual(kept.map((e) => e.seq));
        expect(journal.gaps).toBe(gaps);
      }),
    );
  });

  it("refuses a journal with one value changed, with chain_broken", () => {
    fc.assert(
      fc.property(VALUES, fc.nat(), fc.integer(), (values, at, replacement) => {
        const events = chain(values);
        const i = at % events.length;
        fc.pre(events[i]!.data["value"] !== replacement);
        events[i]!.data["value"] = replacement;
        expect(code(() => readJournal(lines(events), "j.jsonl"))).toBe("chain_broken");
      }),
    );
  });

  it("refuses a rehashed event that no longer links, events out of order, and an event without a hash", () => {
    const events = chain([1, 2, 3]);
    // Rewritten and rehashed, as someone without the audit key could: its successor's link gives it away.
    events[1]!.data["value"] = 99;
    linkEvent(events[1]!, events[0]!.hash!);
    expect(code(() => readJournal(lines(events), "j.jsonl"))).toBe("chain_broken");
    const fresh = chain([1, 2, 3]);
    expect(code(() => readJournal(lines([fresh[1]!, fresh[0]!]), "j.jsonl"))).toBe("chain_broken");
    const { hash: _hash, ...bare } = fresh[0]!;
    expect(code(() => readJournal(JSON.stringify(bare), "j.jsonl"))).toBe("chain_broken");
  });

  it("calls lines that are not events bad input, and an empty journal too", () => {
    expect(code(() => readJournal("not json", "j.jsonl"))).toBe("invalid_params");
    expect(code(() => readJournal('{"kind":"x"}', "j.jsonl"))).toBe("invalid_params");
    expect(code(() => readJournal("\n\n", "j.jsonl"))).toBe("invalid_params");
  });
});
