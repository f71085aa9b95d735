import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CarError, parseProposal, serializeProposal, setOwn, stringifyProposal, type JsonValue } from "./index.ts";

const trickyKey = fc.oneof(fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "k"), fc.string({ maxLength: 6 }));

/** An object built with own properties, so `__proto__` keys are data (as JSON.parse makes them). */
function mapOf<T>(value: fc.Arbitrary<T>, maxLength = 4): fc.Arbitrary<Record<string, T>> {
  return fc.array(fc.tuple(trickyKey, value), { maxLength }).map((entries) => {
    const out: Record<string, T> = {};
    for (const [k, v] of entries) setOwn(out, k, v);
    return out;
  });
}

const json = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>;
const keys = fc.array(fc.constantFrom("k1", "k2", "__proto__", "toString"), { maxLength: 3 });

const precondition = fc.record(
  {
    key: fc.constantFrom("k1", "k2", "__proto__"),
    operator: fc.constantFrom("eq", "neq", "gt", "lt", "gte", "lte", "exists", "not_exists", "contains", "EQ", "future_op"),
    value: json,
    description: fc.string({ maxLength: 8 }),
  },
  { requiredKeys: ["key"] },
);

const compensation = fc.oneof(
  fc.record({ type: fc.constant("tool"), tool: fc.string({ maxLength: 5 }), parameters: mapOf(json) }, { requiredKeys: ["type", "tool"] }),
  fc.record({ type: fc.constant("action_ref"), action_id: fc.string({ maxLength: 5 }) }),
);

function actionArb(index: number) {
  const earlier = [...Array(index).keys()].map((i) => `a${i}`);
  return fc
    .record(
      {
        id: fc.constant(`a${index}`),
        type: fc.constantFrom("tool_call", "state_write", "state_read", "assertion"),
        tool: fc.string({ maxLength: 6 }),
        parameters: mapOf(json),
        preconditions: fc.array(precondition, { maxLength: 2 }),
        expected_effects: mapOf(json),
        dependencies: earlier.length > 0 ? fc.subarray(earlier) : fc.constant([]),
        state_dependencies: keys,
        read_set: keys,
        write_set: keys,
        assumptions: fc.array(fc.record({ key: fc.string({ maxLength: 4 }), expected_value: json, read_version: fc.nat() }, { requiredKeys: ["key"] }), {
          maxLength: 2,
        }),
        invocation_mode: fc.constantFrom("one_shot", "streaming", "long_running"),
        reversibility: fc.constantFrom("reversible", "compensable", "irreversible"),
        compensation,
        idempotent: fc.boolean(),
        max_retries: fc.nat({ max: 10 }),
        failure_behavior: fc.constantFrom("abort", "retry", "skip"),
        timeout_ms: fc.nat(),
        metadata: mapOf(json),
        x_future: json,
      },
      { requiredKeys: ["id", "type", "tool"] },
    )
    .map((a) => (a.type === "tool_call" ? a : (({ tool: _tool, ...rest }) => rest)(a)));
}

const validProposal = fc.integer({ min: 0, max: 6 }).chain((n) =>
  fc.record(
    {
      id: fc.stringMatching(/^[0-9a-f]{12}$/),
      source: fc.string({ maxLength: 8 }),
      timestamp: fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) => d.toISOString()),
      actions: fc.tuple(...[...Array(n).keys()].map(actionArb)),
      context: mapOf(json),
      x_proposal_extra: json,
    },
    { requiredKeys: ["actions"] },
  ),
);

function expectParsedOrCarError(input: unknown): void {
  try {
    parseProposal(input);
  } catch (error) {
    if (!(error instanceof CarError)) throw error;
    expect(error.code).toBe("invalid_proposal");
  }
}

describe("parseProposal properties", () => {
  it("serialise ∘ parse is the identity on valid proposals", () => {
    fc.assert(
      fc.property(validProposal, (input) => {
        const wire = serializeProposal(parseProposal(input));
        const text = JSON.stringify(wire);
        // Parsing the serialised form changes nothing, from a value or from text.
        expect(JSON.stringify(serializeProposal(parseProposal(wire)))).toBe(text);
        expect(stringifyProposal(parseProposal(text))).toBe(text);
        // Everything the input said survives, unknown fields included.
        expect(JSON.parse(text)["x_proposal_extra"]).toEqual(JSON.parse(JSON.stringify(input))["x_proposal_extra"]);
      }),
      { numRuns: 200 },
    );
  }, 120_000);

  it("any JSON value either parses or throws CarError", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expectParsedOrCarError(value);
        expectParsedOrCarError(JSON.stringify(value));
      }),
      { numRuns: 500 },
    );
  });

  it("proposal-shaped noise either parses or throws CarError", () => {
    const noisyAction = fc.record(
      {
        id: fc.oneof(fc.constantFrom("a", "b", "c"), json),
        type: fc.oneof(fc.constantFrom("tool_call", "state_write", "assertion", "TOOL_CALL"), json),
        tool: json,
        parameters: fc.oneof(mapOf(fc.oneof(json, fc.constantFrom("$a.output", "$b.output.x", "$c.output"))), json),
        dependencies: fc.oneof(fc.array(fc.constantFrom("a", "b", "c", "z")), json),
        state_dependencies: fc.oneof(keys, json),
        expected_effects: fc.oneof(mapOf(json), json),
        preconditions: fc.oneof(fc.array(precondition), json),
        compensation: fc.oneof(compensation, json),
        timeout_ms: fc.oneof(fc.constant(null), fc.integer(), json),
        max_retries: fc.oneof(fc.integer(), fc.double()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.record({ actions: fc.oneof(fc.array(noisyAction, { maxLength: 4 }), json), id: json, timestamp: fc.oneof(fc.string(), json) }, { requiredKeys: [] }),
        (value) => {
          expectParsedOrCarError(value);
          expectParsedOrCarError(JSON.stringify(value));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("__proto__ keys anywhere in the text stay data and never pollute Object.prototype", () => {
    fc.assert(
      fc.property(json, json, json, (x, y, z) => {
        const text = `{"__proto__":${JSON.stringify(x)},"actions":[{"type":"tool_call","tool":"t","__proto__":${JSON.stringify(y)},"parameters":{"__proto__":${JSON.stringify(z)},"constructor":1},"expected_effects":{"__proto__":1}}]}`;
        const p = parseProposal(text);
        expect(Object.keys(p.actions[0]!.parameters)).toEqual(["__proto__", "constructor"]);
        const back = JSON.parse(stringifyProposal(p)) as Record<string, unknown>;
        expect(Object.prototype.hasOwnProperty.call(back, "__proto__")).toBe(true);
        expect(stringifyProposal(p)).toContain(`"__proto__":${JSON.stringify(x)}`);
        expect(Object.keys(Object.prototype)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});
