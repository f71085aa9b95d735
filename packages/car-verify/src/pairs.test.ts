import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pairsAmongProposals, readWriteCrossCount, readWriteSpanning } from "./pairs.ts";

/** Up to 6 proposals' groups of one key's actions (indices within each proposal, ascending). */
const groups = fc.array(
  fc.uniqueArray(fc.nat(400), { maxLength: 300 }).map((g) => g.sort((a, b) => a - b)),
  { minLength: 1, maxLength: 6 },
);

describe("pairs across proposals", () => {
  it("lists every pair while the budget lasts, then a linear spanning set in which every action still appears", () => {
    fc.assert(
      fc.property(groups, fc.constantFrom(0, 50, Number.POSITIVE_INFINITY), (gs, left) => {
        const pairs: [number, number, number, number][] = [];
        const budget = { left };
        pairsAmongProposals(gs, budget, (p, x, q, y) => pairs.push([p, x, q, y]));
        for (const [p, , q] of pairs) expect(p).toBeLessThan(q);
        const busy = gs.filter((g) => g.length > 0).length;
        const members = gs.reduce((n, g) => n + g.length, 0);
        if (busy < 2) {
          expect(pairs).toEqual([]);
          return;
        }
        const seen = new Set(pairs.flatMap(([p, x, q, y]) => [`${p}/${x}`, `${q}/${y}`]));
        expect(seen.size).toBe(members);
        // Every pair when they all fit the budget (exactly fitting included); past it, the budget's worth plus a linear set.
        let total = 0;
        for (let p = 0; p < gs.length; p++) for (let q = p + 1; q < gs.length; q++) total += gs[p]!.length * gs[q]!.length;
        if (total <= left) expect(pairs.length).toBe(total);
        else expect(pairs.length).toBeLessThanOrEqual((Number.isFinite(left) ? left : 0) + members);
      }),
      // 2·7 + 2·4 + 7·4 = 50 pairs: a budget of 50 lists them all and ends at exactly 0.
      {
        examples: [
          [
            [
              [0, 1],
              [0, 1, 2, 3, 4, 5, 6],
              [0, 1, 2, 3],
            ],
            50,
          ],
        ],
      },
    );
  });

  it("read-write: the spanning set pairs readers and writers of different proposals only, each at least once", () => {
    fc.assert(
      fc.property(groups, groups, (readers, writers) => {
        const n = Math.min(readers.length, writers.length);
        const rs = readers.slice(0, n);
        const ws = writers.slice(0, n);
        const pairs: [number, number, number, number][] = [];
        readWriteSpanning(rs, ws, (p, x, q, y) => pairs.push([p, x, q, y]));
        for (const [p, x, q, y] of pairs) {
          expect(p).not.toBe(q);
          expect(rs[p]).toContain(x);
          expect(ws[q]).toContain(y);
        }
        // A reader is paired whenever another proposal writes, a writer whenever another proposal reads.
        rs.forEach((r, p) => {
          if (ws.some((w, q) => q !== p && w.length > 0)) for (const x of r) expect(pairs.some(([pp, xx]) => pp === p && xx === x)).toBe(true);
        });
        ws.forEach((w, q) => {
          if (rs.some((r, p) => p !== q && r.length > 0)) for (const y of w) expect(pairs.some(([, , qq, yy]) => qq === q && yy === y)).toBe(true);
        });
        expect(pairs.length).toBeLessThanOrEqual(rs.reduce((a, r) => a + r.length, 0) + ws.reduce((a, w) => a + w.length, 0));
        // Small groups are counted pair by pair: every reader of p with every writer of q ≠ p.
        if ([...rs, ...ws].every((g) => g.length <= 256)) {
          const every = rs.reduce((sum, r, p) => sum + ws.reduce((s2, w, q) => s2 + (q === p ? 0 : r.length * w.length), 0), 0);
          expect(readWriteCrossCount(rs, ws, Number.POSITIVE_INFINITY)).toBe(every);
        }
      }),
    );
  });
});
