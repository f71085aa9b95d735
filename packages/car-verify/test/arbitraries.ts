/**
 * fast-check generators for proposals `parseProposal` accepts: small key and
 * tool vocabularies so actions collide on keys, tools and parameters often,
 * dependencies only on earlier actions so the graph is acyclic.
 */
import fc from "fast-check";
import type { ActionProposal, JsonValue } from "@car/ir";
import { parseProposal } from "@car/ir";

export const KEYS = ["x", "y", "k1", "k2", "__proto__"] as const;
const TOOLS = ["t1", "t2", "t3"] as const;
const OPERATORS = ["eq", "neq", "gt", "lt", "gte", "lte", "exists", "not_exists", "contains", "EQ"] as const;

const key = fc.constantFrom(...KEYS);
const value: fc.Arbitrary<JsonValue> = fc.oneof(fc.constantFrom<JsonValue>(0, 1, 2, true, false, null, "a", "ab"), fc.constant<JsonValue>([1, "a"]));
const record = (keys: fc.Arbitrary<string>) =>
  fc.array(fc.tuple(keys, value), { maxLength: 3 }).map((pairs) => {
    const out: Record<string, JsonValue> = Object.create(null);
    for (const [k, v] of pairs) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });

export const stateArb = record(key);

const rawAction = (index: number) =>
  fc
    .record(
      {
        type: fc.constantFrom("tool_call", "state_write", "state_read", "assertion"),
        tool: fc.constantFrom(...TOOLS),
        parameters: fc.oneof(record(fc.constantFrom("p", "q")), fc.constant({})),
        preconditions: fc.array(fc.record({ key, operator: fc.constantFrom(...OPERATORS), value }), { maxLength: 2 }),
        expected_effects: record(key),
        deps: fc.array(fc.nat(Math.max(0, index - 1)), { maxLength: index === 0 ? 0 : 2 }),
        state_dependencies: fc.array(key, { maxLength: 2 }),
        write_set: fc.array(key, { maxLength: 1 }),
        read_set: fc.array(key, { maxLength: 1 }),
        reversibility: fc.constantFrom("reversible", "compensable", "irreversible"),
        compensation: fc.option(fc.constantFrom("a0", "a1", "missing"), { nil: undefined }),
      },
      { requiredKeys: ["type", "tool", "parameters", "preconditions", "expected_effects", "deps", "state_dependencies"] },
    )
    .map((a) => {
      const { deps, compensation, ...rest } = a;
      const action: Record<string, unknown> = { ...rest, id: `a${index}`, dependencies: [...new Set(deps)].map((d) => `a${d}`) };
      if (a.type !== "tool_call") delete action["tool"];
      if (a.type === "state_write") action["parameters"] = { key: Object.keys(a.expected_effects)[0] ?? "x", value: 1 };
      if (compensation !== undefined) action["compensation"] = { type: "action_ref", action_id: compensation };
      return action;
    });

export const proposalArb: fc.Arbitrary<ActionProposal> = fc
  .integer({ min: 0, max: 10 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => rawAction(i))))
  .map((actions) => parseProposal({ id: "p", actions }));
