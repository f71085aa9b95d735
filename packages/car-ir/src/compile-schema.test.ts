import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { CarError, compileSchema, parseProposal } from "./index.ts";

describe("compileSchema", () => {
  const schema = { type: "object", properties: { env: { type: "string", enum: ["staging", "prod"] }, n: { type: "integer" } }, required: ["env"] };

  it("validates and reports every error with value and schema pointers", () => {
    const validate = compileSchema(schema);
    expect(validate({ env: "staging" })).toEqual({ ok: true });
    const result = validate({ env: "dev", n: 1.5 });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors.map((e) => e.path).sort()).toEqual(["/env", "/n"]);
      expect(result.errors.find((e) => e.path === "/env")?.schemaPath).toBe("#/properties/env/enum");
    }
    const missing = validate({});
    expect(missing.ok ? [] : missing.errors.map((e) => e.path)).toEqual(["/env"]);
  });

  it("caches by canonical JSON: key order does not matter", () => {
    const reordered = { required: ["env"], properties: { n: { type: "integer" }, env: { enum: ["staging", "prod"], type: "string" } }, type: "object" };
    expect(compileSchema(reordered)).toBe(compileSchema(schema));
  });

  it("accepts schemas naming another draft, and two different schemas sharing an $id", () => {
    const a = compileSchema({ $schema: "https://json-schema.org/draft/2020-12/schema", $id: "urn:tool:x", type: "string" });
    const b = compileSchema({ $id: "urn:tool:x", type: "number" });
    expect(a("s").ok).toBe(true);
    expect(b("s").ok).toBe(false);
    expect(b(1).ok).toBe(true);
  });

  it("throws invalid_schema for a schema that does not compile", () => {
    for (const bad of [{ type: "nope" }, { $ref: "#/definitions/missing" }, { minimum: "x" }]) {
      try {
        compileSchema(bad);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(CarError);
        expect((error as CarError).code).toBe("invalid_schema");
      }
    }
  });

  it("an empty schema accepts anything", () => {
    const any = compileSchema({});
    expect(any(null).ok && any([1]).ok && any({ __proto__: 1 }).ok).toBe(true);
  });
});

describe("compileSchema: linear-time patterns", () => {
  it("runs a catastrophic-backtracking pattern on a long value in linear time (RE2)", () => {
    // Under a backtracking engine each extra character doubles the work: 40 characters took minutes.
    const validate = compileSchema({
      type: "object",
      properties: { s: { type: "string", pattern: "^(a+)+$" }, t: { patternProperties: { "^(x|x)*$": { type: "number" } } } },
    });
    const hostile = `${"a".repeat(40)}!`;
    const result = validate({ s: hostile });
    expect(result.ok).toBe(false);
    expect(validate({ s: `${"a".repeat(100_000)}!` }).ok).toBe(false);
    expect(validate({ s: "a".repeat(100_000) }).ok).toBe(true);
    expect(validate({ t: { [`${"x".repeat(40)}y`]: 1 } }).ok).toBe(true);
  });

  it("refuses, at compile time, a pattern RE2 cannot run, naming it", () => {
    for (const pattern of ["(a)\\1", "a(?=b)", "(?<!x)y"]) {
      expect(() => compileSchema({ type: "string", pattern })).toThrow(
        expect.objectContaining({ code: "invalid_schema", message: expect.stringContaining(JSON.stringify(pattern)) }),
      );
      expect(() => compileSchema({ patternProperties: { [pattern]: { type: "string" } } })).toThrow(expect.objectContaining({ code: "invalid_schema" }));
    }
  });

  it("keeps ECMA-262 escapes tool schemas use: \\uXXXX, \\u{…}, classes, \\d and Unicode properties", () => {
    const validate = compileSchema({ type: "string", pattern: "^[\\u0041-\\u005A]\\u{1F600}\\d+\\p{L}\\\\u0041$" });
    expect(validate("Q😀12é\\u0041").ok).toBe(true);
    expect(validate("q😀12é\\u0041").ok).toBe(false);
    expect(validate("Q😀12éA").ok).toBe(false);
  });
});

describe("compileSchema: JSON equality over parsed (prototype-free) values", () => {
  const parsed = (value: unknown) =>
    parseProposal({ actions: [{ id: "a", type: "tool_call", tool: "t", parameters: { v: value } }] }).actions[0]!.parameters["v"];

  it("uniqueItems over objects answers instead of throwing", () => {
    const validate = compileSchema({ type: "array", uniqueItems: true });
    const dup = validate(
      parsed([
        { a: 1, b: [2] },
        { b: [2], a: 1 },
      ]),
    );
    expect(dup.ok).toBe(false);
    expect(dup.ok ? "" : dup.errors[0]!.message).toContain("duplicate items");
    expect(validate(parsed([{ a: 1 }, { a: 2 }, 1, "1", 1.5, null, [1]])).ok).toBe(true);
    expect(validate(parsed([1, 1.0])).ok).toBe(false);
    expect(validate(parsed(Array.from({ length: 20_000 }, (_, i) => ({ i })))).ok).toBe(true);
  });

  it("enum and const accept equal objects and reject different ones", () => {
    const e = compileSchema({ enum: [{ mode: "fast", n: [1, 2] }, "x"] });
    expect(e(parsed({ n: [1, 2], mode: "fast" })).ok).toBe(true);
    expect(e(parsed("x")).ok).toBe(true);
    expect(e(parsed({ n: [2, 1], mode: "fast" })).ok).toBe(false);
    const c = compileSchema({ type: "object", properties: { o: { const: JSON.parse('{"__proto__":1,"k":null}') } } });
    expect(c(parsed({ o: JSON.parse('{"k":null,"__proto__":1}') })).ok).toBe(true);
    const bad = c(parsed({ o: { k: 0 } }));
    expect(bad.ok ? [] : bad.errors.map((x) => [x.path, x.message])).toEqual([["/o", "must be equal to constant"]]);
  });
});

describe("compileSchema: recursion", () => {
  it("refuses a schema that refers to itself without consuming the value", () => {
    expect(() => compileSchema({ $ref: "#" })).toThrow(expect.objectContaining({ code: "invalid_schema" }));
    expect(() => compileSchema({ allOf: [{ $ref: "#" }] })).toThrow(expect.objectContaining({ code: "invalid_schema" }));
  });

  it("a value nested past the stack is rejected by a recursive schema, never thrown", () => {
    const validate = compileSchema({ type: "object", properties: { c: { $ref: "#" } } });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deep = { c: deep };
    const result = validate(deep);
    expect(result.ok).toBe(false);
    expect(validate({ c: { c: {} } }).ok).toBe(true);
  });
});

describe("compileSchema: memory", () => {
  it("gives a schema's memory back once nothing holds its validator (no instance-wide cache grows)", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const settle = async () => {
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
    };
    const distinct = (i: number) => ({
      type: "object",
      properties: { [`field_${i}`]: { type: "string", pattern: `^v${i}-[a-z]+$`, enum: [`v${i}-a`, { i }] } },
    });
    // Warm up (ajv, re2js and the recent ring are loaded and full), then measure 600 more distinct schemas dropped at once.
    for (let i = 0; i < 100; i++) compileSchema(distinct(-1 - i));
    await settle();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 600; i++) expect(compileSchema(distinct(i))({ [`field_${i}`]: `v${i}-a` }).ok).toBe(true);
    await settle();
    const retained = process.memoryUsage().heapUsed - before;
    // Kept for ever, 600 compiled schemas are about 2.7 MB; released, only the 64 most recent stay.
    expect(retained).toBeLessThan(1_200_000);
  }, 60_000);
});
