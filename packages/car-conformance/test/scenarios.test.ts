/**
 * The bundled scenarios are well-formed data: each capability file validates
 * against `scenarios/scenario.schema.json`, ids are unique and prefixed by
 * their capability, every citation names a section that exists in the
 * cited spec file's headings, and the suite covers the capabilities RuntimeBench promises.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compileSchema, type JsonObject } from "@car/ir";
import { loadCapabilities, SCENARIOS_DIR } from "../src/index.ts";
import { OPERATORS } from "../src/match.ts";

const schema = JSON.parse(readFileSync(join(SCENARIOS_DIR, "scenario.schema.json"), "utf8")) as JsonObject;
const validate = compileSchema(schema);
const suite = loadCapabilities();

/** Every `$`-prefixed key used in expectations must be a known operator (a typo would silently match literally). */
function unknownOperators(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) unknownOperators(v, out);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k.startsWith("$") && !(OPERATORS as readonly string[]).includes(k)) out.push(k);
      unknownOperators(v, out);
    }
  }
  return out;
}

/** A heading (or a cited part) as written and without backticks, `#`s or a trailing parenthesis. */
function headingNames(text: string): string[] {
  const plain = text
    .replace(/^#+\s*/, "")
    .replace(/`/g, "")
    .trim();
  return [plain, plain.replace(/\s*\([^)]*\)$/, "")];
}

describe("the bundled scenarios", () => {
  it("cover every capability of the issue, each tagged required or optional", () => {
    expect(suite.map((c) => c.capability).sort()).toEqual(
      [
        "approvals",
        "cost",
        "detached-tools",
        "equivalent",
        "events",
        "failure-behaviours",
        "idempotency",
        "ir-parsing",
        "optimize",
        "ordering",
        "state-actions",
        "policies",
        "preconditions",
        "rate-limits",
        "reference",
        "rollback",
        "simulate",
        "supervision",
        "terminal-failures",
        "timeouts",
        "tool-dispatch",
        "verify",
        "waiting-approvals",
      ].sort(),
    );
    expect(suite.reduce((n, c) => n + c.scenarios.length, 0)).toBeGreaterThanOrEqual(80);
  });

  for (const cap of suite) {
    it(`${cap.capability}: validates against the schema`, () => {
      const checked = validate(cap);
      expect(checked.ok ? [] : checked.errors).toEqual([]);
    });
  }

  it("the schema rejects malformed scenarios", () => {
    const bad = (scenario: unknown): boolean => !validate({ capability: "x", title: "x", required: true, scenarios: [scenario] }).ok;
    const good = { id: "x.ok", title: "t", spec: { file: "car-spec.md", section: "Policies" }, steps: [{ submit: { actions: [] } }] };
    expect(bad(good)).toBe(false);
    expect(bad({ ...good, spec: undefined })).toBe(true);
    expect(bad({ ...good, spec: { file: "made-up.md", section: "x" } })).toBe(true);
    expect(bad({ ...good, steps: [{ submit: {}, verify: {} }] })).toBe(true);
    expect(bad({ ...good, tools: [{ name: "t", behaviour: [{ output: 1, error: "x" }] }] })).toBe(true);
    expect(bad({ ...good, policies: [{ name: "p", rule: "deny_tool" }] })).toBe(true);
  });

  it("ids are unique and start with their capability", () => {
    const ids = suite.flatMap((c) => c.scenarios.map((s) => s.id));
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of suite) for (const s of c.scenarios) expect(s.id.startsWith(`${c.capability}.`)).toBe(true);
  });

  it("expectations use only known operators", () => {
    expect(suite.flatMap((c) => c.scenarios.flatMap((s) => unknownOperators([s.steps.map((st) => st.expect), s.expect])))).toEqual([]);
  });

  it("every citation names headings that exist in the cited spec file", () => {
    // The seeds live in shared/ beside the checkout (as on CI), or where CAR_SEEDS_DIR says.
    const seeds = process.env["CAR_SEEDS_DIR"] ?? fileURLToPath(new URL("../../../../shared/seeds/", import.meta.url));
    if (!existsSync(join(seeds, "agent-ir-spec.md"))) {
      // Outside CI a checkout without shared/ cannot check citations; under CI that is a failure, not a pass.
      expect(process.env["CI"], `the seeds are not at ${seeds}`).not.toBe("true");
      return;
    }
    const headings = new Map(
      ["car-spec.md", "agent-ir-spec.md"].map((f) => [
        f,
        readFileSync(join(seeds, f), "utf8")
          .split("\n")
          .filter((l) => l.startsWith("#"))
          .flatMap((l) => headingNames(l)),
      ]),
    );
    const missing: string[] = [];
    for (const c of suite) {
      for (const s of c.scenarios) {
        const list = headings.get(s.spec.file);
        if (list === undefined) continue;
        // "A › B (field)" names heading B under A; a trailing parenthesis names a row of B's table.
        for (const part of s.spec.section.split(" › ")) {
          if (!headingNames(part).some((name) => list.includes(name))) missing.push(`${s.id}: '${part}' in ${s.spec.file}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
