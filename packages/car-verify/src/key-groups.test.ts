import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { groupByKey, groupSize, type KeyGroups, KeyTable, membersOf } from "./key-groups.ts";

/** Per action: the keys it names (repeats allowed); plus a permutation standing in for a topological order. */
const input = fc
  .integer({ min: 0, max: 30 })
  .chain((n) =>
    fc.tuple(
      fc.array(fc.array(fc.constantFrom("a", "b", "c", "__proto__", "k1"), { maxLength: 4 }), { minLength: n, maxLength: n }),
      fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }),
    ),
  );

/** Checks `groups` against a Map of arrays built from the same input. */
function expectGrouped(groups: KeyGroups, keysOf: string[][], order: number[]): void {
  const expected = new Map<string, number[]>();
  for (const i of order) for (const key of new Set(keysOf[i]!)) expected.set(key, [...(expected.get(key) ?? []), i]);
  for (const [key, members] of expected) {
    const k = groups.table.idOf(key)!;
    expect(Array.from(membersOf(groups, k))).toEqual(members);
    expect(groupSize(groups, k)).toBe(members.length);
  }
  for (const key of groups.table.keys) if (!expected.has(key)) expect(groupSize(groups, groups.table.idOf(key)!)).toBe(0);
}

describe("groupByKey", () => {
  it("lists each key's actions once each, in the given order, as a Map of arrays would", () => {
    fc.assert(
      fc.property(input, ([keysOf, order]) => {
        const groups = groupByKey(keysOf.length, (i, out) => out.push(...keysOf[i]!), order);
        expect(groups.table.keys.length).toBe(new Set(keysOf.flat()).size);
        expectGrouped(groups, keysOf, order);
        // First-seen order follows declaration order.
        const firstSeen = [...new Set(keysOf.flat())];
        expect(groups.firstSeen.map((k) => groups.table.keys[k])).toEqual(firstSeen);
      }),
      { numRuns: 300 },
    );
  });

  it("keeps every grouping on one table intact while later ones reuse the table's interning buffers", () => {
    fc.assert(
      fc.property(fc.array(input, { minLength: 2, maxLength: 5 }), (inputs) => {
        const table = new KeyTable();
        const all = inputs.map(([keysOf, order]) => groupByKey(keysOf.length, (i, out) => out.push(...keysOf[i]!), order, table));
        inputs.forEach(([keysOf, order], g) => expectGrouped(all[g]!, keysOf, order));
      }),
      { numRuns: 200 },
    );
  });

  it("shares one key table between groupings; a key interned later has no members in the earlier one", () => {
    const table = new KeyTable();
    const first = groupByKey(2, (i, out) => out.push(i === 0 ? "x" : "y"), [1, 0], table);
    const second = groupByKey(1, (_, out) => out.push("z", "x"), [0], table);
    expect(table.keys).toEqual(["x", "y", "z"]);
    expect(Array.from(membersOf(first, table.idOf("z")!))).toEqual([]);
    expect(Array.from(membersOf(second, table.idOf("x")!))).toEqual([0]);
    expect(second.firstSeen).toEqual([2, 0]);
  });
});
