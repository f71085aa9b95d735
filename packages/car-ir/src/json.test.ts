import { describe, expect, it } from "vitest";
import { cloneJson, emptyMap, jsonEquals } from "./json.ts";

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

describe("emptyMap", () => {
  it("has no prototype: every key, __proto__ included, is an own data property", () => {
    const map = emptyMap<number>();
    expect(Object.getPrototypeOf(map)).toBeNull();
    expect("toString" in map).toBe(false);
    const key = "__proto__";
    map[key] = 1;
    map["constructor"] = 2;
    expect(Object.getPrototypeOf(map)).toBeNull();
    expect(Object.keys(map)).toEqual(["__proto__", "constructor"]);
    expect(map[key]).toBe(1);
  });

  it("hands out a fresh map each time", () => {
    const a = emptyMap<number>();
    a["k"] = 1;
    expect(Object.keys(emptyMap())).toEqual([]);
  });
});
