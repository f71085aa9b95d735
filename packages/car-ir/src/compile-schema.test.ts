import { describe, expect, it } from "vitest";
import { CarError, compileSchema } from "./index.ts";

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
