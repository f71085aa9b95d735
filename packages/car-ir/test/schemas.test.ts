import { readdirSync, readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { exportNameOf, generateValidatorsSource } from "../scripts/generate-validators.ts";
import { schemas } from "../src/index.ts";

const dir = new URL("../schemas/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".json"));

describe("shipped schemas", () => {
  it("are all exported, equal to the files", () => {
    expect(Object.keys(schemas).sort()).toEqual(files.map(exportNameOf).sort());
    for (const file of files) expect(schemas[exportNameOf(file) as keyof typeof schemas]).toEqual(JSON.parse(readFileSync(new URL(file, dir), "utf8")));
  });

  it("compile under ajv's strict mode as one set", () => {
    const ajv = new Ajv({ strict: true, strictRequired: false, allErrors: true });
    for (const s of Object.values(schemas)) ajv.addSchema(s);
    for (const s of Object.values(schemas)) expect(() => ajv.getSchema(s.$id)).not.toThrow();
  });

  it("src/generated/validators.ts is up to date (run `npm run generate`)", () => {
    const onDisk = readFileSync(new URL("../src/generated/validators.ts", import.meta.url), "utf8");
    expect(onDisk === generateValidatorsSource()).toBe(true);
  });
});
