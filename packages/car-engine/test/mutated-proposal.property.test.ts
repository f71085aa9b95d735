/**
 * Issue 36 §5, the engine's side: the Runtime's public entry points that
 * take a proposal (`executeProposal`, `verifyProposal`) answer a JSON copy
 * of a parsed proposal that someone edited — `preconditions: [null]`, a
 * `null` or a value of the wrong type in any field or array element, a
 * field removed — with a result or a `CarError`, never a `TypeError` from
 * halfway through a run, and nothing is dispatched for a proposal that
 * does not parse.
 */
import { CarError, type JsonValue, parseProposal } from "@car/ir";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Runtime } from "../src/index.ts";

const BASE = parseProposal({
  id: "p",
  actions: [
    { id: "w", type: "state_write", parameters: { key: "k", value: 1 }, reversibility: "reversible" },
    {
      id: "a",
      type: "tool_call",
      tool: "deploy",
      parameters: { env: "prod" },
      preconditions: [{ key: "k", operator: "eq", value: 1 }],
      expected_effects: { deployed: true },
      dependencies: ["w"],
      state_dependencies: ["k"],
      assumptions: [{ key: "k", expected_value: 1, read_version: 0 }],
      reversibility: "compensable",
      compensation: { type: "tool", tool: "rollback", parameters: { env: "prod" } },
      timeout_ms: 1000,
    },
    { id: "r", type: "state_read", parameters: { key: "deployed" }, dependencies: ["a"] },
    { id: "c", type: "assertion", preconditions: [{ key: "deployed", operator: "exists", value: null }] },
  ],
});
const TEMPLATE = JSON.parse(JSON.stringify(BASE)) as JsonValue;

/** Every path into the template: each field and each array element, at any depth. */
function paths(value: JsonValue, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== "object" || value === null) return [];
  const entries: [string | number, JsonValue][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...prefix, k], ...paths(v, [...prefix, k])]);
}
const PATHS = paths(TEMPLATE);
const WRONG = fc.constantFrom<JsonValue | undefined>(null, undefined, 0, -1, 1.5, "", "x", true, [], {}, [null], [1], { key: null });

/** A JSON copy of the parsed proposal with one to three fields or elements replaced (or removed, for `undefined`). */
const mutated = fc.array(fc.tuple(fc.constantFrom(...PATHS), WRONG), { minLength: 1, maxLength: 3 }).map((edits) => {
  const copy = JSON.parse(JSON.stringify(TEMPLATE)) as Record<string, unknown>;
  for (const [path, value] of edits) {
    let at: unknown = copy;
    for (const k of path.slice(0, -1)) at = typeof at === "object" && at !== null ? (at as Record<string | number, unknown>)[k] : undefined;
    if (typeof at !== "object" || at === null) continue;
    const last = path[path.length - 1] as string | number;
    if (value === undefined && !Array.isArray(at)) delete (at as Record<string | number, unknown>)[last];
    else (at as Record<string | number, unknown>)[last] = value === undefined ? null : structuredClone(value);
  }
  return copy;
});

function runtime(): { rt: Runtime; calls: () => number } {
  const rt = new Runtime();
  let calls = 0;
  for (const tool of ["deploy", "rollback"])
    rt.registerTool(tool, () => {
      calls++;
      return { ok: true };
    });
  return { rt, calls: () => calls };
}

describe("the Runtime answers an edited JSON copy of a parsed proposal with a result or a CarError", () => {
  it("the issue's case: preconditions [null] is invalid_proposal, nothing dispatched", async () => {
    const copy = JSON.parse(JSON.stringify(BASE));
    copy.actions[1].preconditions = [null];
    const { rt, calls } = runtime();
    await expect(rt.executeProposal(copy)).rejects.toMatchObject({ code: "invalid_proposal" });
    expect(() => rt.verifyProposal(copy)).toThrow(expect.objectContaining({ code: "invalid_proposal" }));
    expect(calls()).toBe(0);
  });

  it("executeProposal: resolves or rejects with a CarError, nothing else", async () => {
    await fc.assert(
      fc.asyncProperty(mutated, async (p) => {
        const { rt, calls } = runtime();
        let parses = true;
        try {
          parseProposal(p);
        } catch {
          parses = false;
        }
        try {
          await rt.executeProposal(p as never);
        } catch (error) {
          if (!(error instanceof CarError)) throw new Error(`executeProposal threw ${String(error)} on ${JSON.stringify(p)}`);
        }
        if (!parses) expect(calls()).toBe(0);
      }),
      { numRuns: 150 },
    );
  });

  it("verifyProposal: returns or throws a CarError, nothing else", () => {
    const { rt } = runtime();
    fc.assert(
      fc.property(mutated, (p) => {
        try {
          rt.verifyProposal(p as never);
        } catch (error) {
          if (!(error instanceof CarError)) throw new Error(`verifyProposal threw ${String(error)} on ${JSON.stringify(p)}`);
        }
      }),
      { numRuns: 150 },
    );
  });
});
