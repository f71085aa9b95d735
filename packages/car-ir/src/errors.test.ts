import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CarError, carCodeForRpcError, ERROR_CODES, isCarError, toCarError } from "./errors.ts";

describe("CarError", () => {
  it("maps every code to one JSON-RPC number and a CLI exit code", () => {
    const byNumber = new Map<number, string[]>();
    for (const [code, row] of Object.entries(ERROR_CODES)) {
      byNumber.set(row.jsonrpc, [...(byNumber.get(row.jsonrpc) ?? []), code]);
      expect([1, 2, 3]).toContain(row.exit);
    }
    // Only the "bad arguments" family shares the standard -32602.
    for (const [n, codes] of byNumber) if (codes.length > 1) expect(n).toBe(-32602);
    // The reference protocol's own numbers keep their meaning.
    expect(ERROR_CODES.unauthorized.jsonrpc).toBe(-32001);
    expect(ERROR_CODES.approval_denied.jsonrpc).toBe(-32003);
  });

  it("carries code, details and the mapped numbers, and serialises them", () => {
    const e = new CarError("unknown_tool", "no tool 'x'", { tool: "x" });
    expect(e).toBeInstanceOf(Error);
    expect(e.jsonrpcCode).toBe(ERROR_CODES.unknown_tool.jsonrpc);
    expect(e.exitCode).toBe(1);
    expect(JSON.parse(JSON.stringify(e))).toEqual({ code: "unknown_tool", message: "no tool 'x'", details: { tool: "x" } });
    expect(isCarError(e, "unknown_tool")).toBe(true);
    expect(isCarError(e, "timeout")).toBe(false);
  });

  it("wraps foreign throws without losing the cause, and keeps CarErrors as they are", () => {
    const cause = new TypeError("boom");
    const wrapped = toCarError(cause, "tool_error");
    expect(wrapped.code).toBe("tool_error");
    expect(wrapped.message).toBe("boom");
    expect(wrapped.cause).toBe(cause);
    expect(toCarError("plain")).toMatchObject({ code: "internal", message: "plain" });
    const original = new CarError("timeout", "late");
    expect(toCarError(original)).toBe(original);
  });

  it("recognises a CarError from another copy of @car/ir by its name and a known code", () => {
    // What a second copy of the package would throw: same shape, a different class.
    class ForeignCarError extends Error {
      override readonly name = "CarError";
      constructor(
        readonly code: string,
        message: string,
        readonly details: Record<string, unknown> = {},
      ) {
        super(message);
      }
    }
    const foreign = new ForeignCarError("policy_denied", "denied by policy: x");
    expect(foreign instanceof CarError).toBe(false);
    expect(isCarError(foreign)).toBe(true);
    expect(isCarError(foreign, "policy_denied")).toBe(true);
    expect(isCarError(foreign, "internal")).toBe(false);
    // Kept as it is, not turned into `internal`.
    expect(toCarError(foreign)).toBe(foreign);
    expect(toCarError(foreign).code).toBe("policy_denied");
    // A name alone, or a code outside the table, is not enough.
    expect(isCarError(new ForeignCarError("made_up", "x"))).toBe(false);
    expect(isCarError(Object.assign(new Error("x"), { code: "timeout" }))).toBe(false);
    expect(isCarError({ name: "CarError", code: "timeout" })).toBe(false);
    expect(isCarError({ name: "CarError", code: "__proto__", message: "x" })).toBe(false);
  });
});

describe("carCodeForRpcError", () => {
  it("reads every table code back from its own JSON-RPC number and car_code", () => {
    for (const [code, row] of Object.entries(ERROR_CODES)) expect(carCodeForRpcError(row.jsonrpc, { car_code: code })).toBe(code);
  });

  it("maps a number alone to a code that owns that number", () => {
    for (const row of Object.values(ERROR_CODES)) expect(ERROR_CODES[carCodeForRpcError(row.jsonrpc)].jsonrpc).toBe(row.jsonrpc);
    expect(carCodeForRpcError(-32602)).toBe("invalid_params");
    expect(carCodeForRpcError(-32601)).toBe("not_found");
    expect(carCodeForRpcError(-32006)).toBe("invalid_params");
  });

  it("never trusts an unknown car_code or a non-object data, and calls any other number internal", () => {
    fc.assert(
      fc.property(fc.integer(), fc.anything(), (n, data) => {
        const code = carCodeForRpcError(n, data);
        expect(Object.hasOwn(ERROR_CODES, code)).toBe(true);
      }),
    );
    expect(carCodeForRpcError(-32001, { car_code: "__proto__" })).toBe("unauthorized");
    expect(carCodeForRpcError(12345, "tool_error")).toBe("internal");
  });
});
