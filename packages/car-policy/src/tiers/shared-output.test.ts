/**
 * A resolved `$id.output` is one deep-frozen value shared by every action
 * that references it (issue "one door" §4): classification and the
 * operation fingerprint read it once, by identity, and judge it exactly as
 * they judge the same parameters unshared.
 */
import type { Action, JsonObject, JsonValue } from "@car/ir";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toolAction } from "../test-helpers.ts";
import { classifyAction } from "./classify-action.ts";
import { operationFingerprint } from "./operation-fingerprint.ts";

/** Deep-freezes a value the way `resolveOutputRefs` freezes an output. */
function frozen<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}

/** An output whose every row counts the reads of its `name`: what a walk over it costs, observable. */
function countedOutput(rows: number): { output: JsonValue; reads: () => number } {
  let reads = 0;
  const output = Array.from({ length: rows }, (_, i) =>
    Object.defineProperty({ id: i }, "name", {
      enumerable: true,
      get: () => {
        reads++;
        return `row ${i}`;
      },
    }),
  );
  return { output: frozen(output) as unknown as JsonValue, reads: () => reads };
}

/** A tool call holding `parameters` themselves (the factory would copy them). */
const call = (tool: string, parameters: JsonObject, id = "a1"): Action => ({ ...toolAction(tool, {}, id), parameters });

const referencing = (n: number, output: JsonValue): Action[] =>
  Array.from({ length: n }, (_, i) => call("take", { input: output, note: `call ${i}` }, `r${i}`));

/** Parameter values with the words and keys the classifier looks for. */
const words = fc.constantFrom("drop", "table", "drop table", "rm", "-rf", "git", "reset", "--hard", "curl https://x", "DROP", "ok", "", "api_key", "token");
const value: fc.Arbitrary<JsonValue> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    words,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(words, fc.string({ maxLength: 4 })), tie("v"), { maxKeys: 4 }),
  ),
})).v as fc.Arbitrary<JsonValue>;

describe("a shared, deep-frozen output", () => {
  it("is walked once by classification, however many actions reference it", () => {
    const { output, reads } = countedOutput(2_000);
    const actions = referencing(34, output);
    classifyAction(actions[0]!);
    const first = reads();
    for (const a of actions.slice(1)) classifyAction(a);
    expect(first).toBeGreaterThan(0);
    expect(reads()).toBe(first);
  });

  it("is serialised once by the fingerprint, however many actions reference it", () => {
    const { output, reads } = countedOutput(2_000);
    const actions = referencing(34, output);
    operationFingerprint(actions[0]!);
    const first = reads();
    for (const a of actions.slice(1)) operationFingerprint(a);
    expect(first).toBeGreaterThan(0);
    expect(reads()).toBe(first);
  });

  it("is classified and fingerprinted exactly like the same parameters unshared", () => {
    fc.assert(
      fc.property(fc.constantFrom("take", "shell", "run_command", "send_email"), value, value, (tool, shared, rest) => {
        const plain: JsonObject = { input: structuredClone(shared), other: structuredClone(rest), command: "ls" };
        const withShared: JsonObject = { input: frozen(structuredClone({ v: shared })).v, other: rest, command: "ls" };
        const a = call(tool, plain);
        const b = call(tool, withShared);
        // Twice: the second reading comes from what the first kept.
        for (let i = 0; i < 2; i++) {
          expect(classifyAction(b)).toEqual(classifyAction(a));
          expect(operationFingerprint(b)).toBe(operationFingerprint(a));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("is read afresh when only its outer object is frozen (an inner one could still change)", () => {
    const inner = { text: "harmless" };
    const action = call("take", { input: Object.freeze({ inner }) });
    expect(classifyAction(action).tier).toBe("sandbox_edit");
    const before = operationFingerprint(action);
    inner.text = "drop table users";
    expect(classifyAction(action).tier).toBe("full_access");
    expect(operationFingerprint(action)).not.toBe(before);
  });
});
