import { describe, expect, it } from "vitest";
import { CarError, ERROR_CODES, isCarError, toCarError } from "./errors.ts";

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
});
