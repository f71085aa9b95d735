/**
 * The supervisor's filter as properties: an empty filter matches
 * everything; each field only narrows; `min_reversibility` means "this risky
 * and worse" (lowering it never drops a match) with an unknown label sorting
 * as most severe; and `parseIntentFilter` answers every malformed filter
 * with `invalid_params`, never another error.
 */
import fc from "fast-check";
import { isCarError, type JsonObject } from "@car/ir";
import { describe, expect, it } from "vitest";
import { type FilterSubject, filterMatches, parseIntentFilter, reversibilityRank } from "./intent-filter.ts";

const label = fc.oneof(fc.constantFrom("reversible", "compensable", "irreversible"), fc.string({ maxLength: 12 }));
const subject: fc.Arbitrary<FilterSubject> = fc.record({
  tools: fc.array(fc.constantFrom("read_file", "send_email", "deploy", "x"), { maxLength: 4 }),
  session_id: fc.option(fc.constantFrom("sess-1", "sess-2"), { nil: null }),
  agent_id: fc.option(fc.constantFrom("bot", "ops"), { nil: undefined }),
  reversibility: label,
});
const filterJson = fc.record(
  {
    tools: fc.array(fc.constantFrom("read_file", "send_email", "deploy", "y"), { maxLength: 3 }),
    sessions: fc.array(fc.constantFrom("sess-1", "bot", "z"), { maxLength: 3 }),
    min_reversibility: label,
  },
  { requiredKeys: [] },
);

describe("supervision filter", () => {
  it("an empty filter matches everything", () => {
    fc.assert(fc.property(subject, (s) => filterMatches(parseIntentFilter(undefined), s) && filterMatches(parseIntentFilter({}), s)));
  });

  it("every field only narrows: a filter matches only what the same filter without that field matches", () => {
    fc.assert(
      fc.property(filterJson, subject, fc.constantFrom("tools", "sessions", "min_reversibility"), (f, s, drop) => {
        const wider: JsonObject = { ...f };
        delete wider[drop];
        if (filterMatches(parseIntentFilter(f), s)) expect(filterMatches(parseIntentFilter(wider), s)).toBe(true);
      }),
    );
  });

  it("min_reversibility is 'this risky and worse'; an unknown label is the most severe", () => {
    fc.assert(
      fc.property(label, label, label, (subjectLabel, low, high) => {
        fc.pre(reversibilityRank(low) <= reversibilityRank(high));
        const s: FilterSubject = { tools: [], session_id: null, agent_id: undefined, reversibility: subjectLabel };
        if (filterMatches(parseIntentFilter({ min_reversibility: high }), s)) {
          expect(filterMatches(parseIntentFilter({ min_reversibility: low }), s)).toBe(true);
        }
      }),
    );
    const unknown: FilterSubject = { tools: [], session_id: null, agent_id: undefined, reversibility: "catastrophic" };
    expect(filterMatches(parseIntentFilter({ min_reversibility: "irreversible" }), unknown)).toBe(true);
    const reversible = { ...unknown, reversibility: "reversible" };
    expect(filterMatches(parseIntentFilter({ min_reversibility: "catastrophic" }), reversible)).toBe(false);
  });

  it("a malformed filter is invalid_params, never another error", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (raw) => {
        try {
          parseIntentFilter(raw as never);
        } catch (err) {
          expect(isCarError(err, "invalid_params"), String(err)).toBe(true);
        }
      }),
    );
  });
});
