/** The assertions and builders the store checks share (node:assert, so the suite needs no test framework). */
import assert from "node:assert/strict";
import { jsonEquals } from "@car/ir";
import type { ActionInput, JsonValue } from "@car/ir";

export const write = (id: string, key: string, value: JsonValue, extra: Partial<ActionInput> = {}): ActionInput => ({
  id,
  type: "state_write",
  parameters: { key, value },
  ...extra,
});

/** Asserts that `actual` holds `expected`'s keys with equal values (objects compared the same way, recursively). */
export function assertHolds(actual: unknown, expected: Record<string, unknown>, path = "value"): void {
  assert.ok(actual !== null && typeof actual === "object", `${path} is not an object: ${JSON.stringify(actual)}`);
  for (const [key, want] of Object.entries(expected)) {
    const got: unknown = (actual as Record<string, unknown>)[key];
    if (want !== null && typeof want === "object" && !Array.isArray(want)) assertHolds(got, want as Record<string, unknown>, `${path}.${key}`);
    else assert.deepStrictEqual(got, want, `${path}.${key}`);
  }
}

/** Asserts that `actual` and `expected` are the same JSON (a store may hand back prototype-free objects; that is not a difference). */
export function assertSameJson(actual: unknown, expected: unknown, message: string): void {
  assert.ok(jsonEquals(actual, expected), `${message}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`);
}

/** Asserts that `promise` rejects with a CarError of `code`. */
export async function assertRejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => (err as { code?: unknown }).code === code);
}
