import { describe, expect, it } from "vitest";
import { cloneJson, jsonEquals } from "./json.ts";

describe("cloneJson", () => {
  it("copies into prototype-free maps, keeping __proto__ as an ordinary key", () => {
    const source = JSON.parse('{"__proto__": {"x": 1}, "a": [1, {"b": null}]}');
    const copy = cloneJson(source);
    expect(Object.getPrototypeOf(copy)).toBeNull();
    expect(Object.keys(copy)).toEqual(["__proto__", "a"]);
    expect(jsonEquals(copy, source)).toBe(true);
    expect(copy).not.toBe(source);
  });

  it("stores negative zero as 0, as a JSON round trip would", () => {
    expect(Object.is(cloneJson(-0), 0)).toBe(true);
    expect(Object.is((cloneJson({ n: [-0] }) as { n: number[] }).n[0], 0)).toBe(true);
    expect(cloneJson(-1.5)).toBe(-1.5);
  });
});
