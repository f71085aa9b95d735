/**
 * The held-bytes bound: a connection's account never passes its share, the
 * pool never passes the process bound, a refusal counts nothing, and what
 * is released (or closed) is given back — for any sequence of operations.
 */
import fc from "fast-check";
import { isCarError } from "@car/ir";
import { describe, expect, it } from "vitest";
import { HeldBytes, HeldState } from "./held-bytes.ts";

type Op = { kind: "take" | "release"; who: number; bytes: number } | { kind: "close"; who: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constantFrom("take" as const, "release" as const), who: fc.nat(2), bytes: fc.nat(120) }),
  fc.record({ kind: fc.constant("close" as const), who: fc.nat(2) }),
);

describe("HeldBytes", () => {
  it("keeps every account within its share and the pool within its bound; a refusal is budget_exceeded and counts nothing", () => {
    fc.assert(
      fc.property(fc.nat(300), fc.nat(200), fc.array(op, { maxLength: 60 }), (limit, quota, ops) => {
        const pool = new HeldBytes(limit);
        const accounts = [pool.account(quota), pool.account(quota), pool.account(quota)];
        for (const o of ops) {
          const account = accounts[o.who]!;
          const before = [account.held, pool.held];
          if (o.kind === "close") account.close();
          else if (o.kind === "release") account.release(o.bytes);
          else {
            try {
              account.take(o.bytes, "test");
            } catch (err) {
              expect(isCarError(err) && err.code === "budget_exceeded").toBe(true);
              expect([account.held, pool.held]).toEqual(before);
            }
          }
          for (const a of accounts) {
            expect(a.held).toBeGreaterThanOrEqual(0);
            expect(a.held).toBeLessThanOrEqual(quota);
          }
          expect(pool.held).toBe(accounts.reduce((sum, a) => sum + a.held, 0));
          expect(pool.held).toBeLessThanOrEqual(limit);
        }
      }),
    );
  });
});

describe("HeldState", () => {
  it("counts a key once, replacing what it held, and gives a forgotten store's values back", () => {
    const pool = new HeldBytes(100);
    const state = new HeldState(pool);
    const store = {};
    state.replace(store, "k", 60, 100);
    state.replace(store, "k", 70, 100);
    expect(pool.held).toBe(70);
    expect(() => state.replace(store, "other", 40, 100)).toThrow(/--max-held-bytes/);
    expect(() => state.replace(store, "big", 101, 100)).toThrow(/--max-held-bytes-per-connection/);
    state.replace(store, "k", 10, 100);
    state.replace(store, "other", 40, 100);
    expect(pool.held).toBe(50);
    state.forget(store);
    expect(pool.held).toBe(0);
  });
});
