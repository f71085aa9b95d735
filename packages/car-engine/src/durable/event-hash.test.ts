import fc from "fast-check";
import { canonicalJson } from "@car/ir";
import type { JsonObject, JsonValue } from "@car/ir";
import { expect, it } from "vitest";
import { GENESIS_HASH, canonicalEventParts, canonicalEventText, linkEvent, sha256Hex } from "./event-hash.ts";
import type { UnhashedEvent } from "./event-hash.ts";

const text = fc.string({ unit: "grapheme", maxLength: 12 });
const event: fc.Arbitrary<UnhashedEvent> = fc
  .record(
    {
      seq: fc.nat({ max: 1e9 }),
      kind: text,
      proposal_id: fc.option(text, { nil: null }),
      action_id: text,
      timestamp: text,
      data: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>) as fc.Arbitrary<JsonObject>,
      prev_hash: fc.stringMatching(/^[0-9a-f]{64}$/),
    },
    { requiredKeys: ["seq", "kind", "proposal_id", "timestamp", "data", "prev_hash"] },
  )
  .map((e) => e as UnhashedEvent);

it("writes the same text as canonicalJson of the whole event", () => {
  fc.assert(
    fc.property(event, (e) => {
      expect(canonicalEventText(e)).toBe(canonicalJson(e as unknown as JsonObject));
    }),
    { numRuns: 500 },
  );
});

it("splits the canonical text around the JSON values of prev_hash and seq", () => {
  fc.assert(
    fc.property(event, (e) => {
      const [head, mid, tail] = canonicalEventParts(e);
      expect(`${head}"${e.prev_hash}"${mid}${e.seq}${tail}`).toBe(canonicalJson(e as unknown as JsonObject));
      expect(head.endsWith('"prev_hash":')).toBe(true);
      expect(mid.endsWith('"seq":')).toBe(true);
    }),
    { numRuns: 300 },
  );
});

it("links an event after its predecessor, hashes its canonical text and returns its data's", () => {
  const e = { seq: 1, kind: "k", proposal_id: null, timestamp: "2026-01-01T00:00:00.000Z", data: { b: 1, a: [true] } };
  const data = linkEvent(e, GENESIS_HASH);
  expect(data).toBe('{"a":[true],"b":1}');
  const text = `{"data":{"a":[true],"b":1},"kind":"k","prev_hash":"${GENESIS_HASH}","proposal_id":null,"seq":1,"timestamp":"2026-01-01T00:00:00.000Z"}`;
  expect(canonicalEventText({ ...e, prev_hash: GENESIS_HASH }, data)).toBe(text);
  expect(e).toMatchObject({ prev_hash: GENESIS_HASH, hash: sha256Hex(text) });
});

it("refuses a lone surrogate, which has no canonical form", () => {
  expect(() => canonicalEventText({ seq: 1, kind: "\ud800", proposal_id: null, timestamp: "", data: {}, prev_hash: GENESIS_HASH })).toThrow(/canonical/);
});
