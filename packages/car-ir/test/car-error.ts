/** Test helper: the `CarError` that `fn` throws (and a failed test when it throws anything else or nothing). */
import { expect } from "vitest";
import { CarError } from "../src/index.ts";

export function carErrorOf(fn: () => unknown): CarError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CarError);
    return error as CarError;
  }
  throw new Error("expected a CarError");
}
