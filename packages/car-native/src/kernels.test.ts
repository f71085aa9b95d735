import { describe, expect, it } from "vitest";
import { nativeKernels, nativeStatus, setNativeMode } from "./index.ts";
import { nativeTestsSkipped } from "./testing.ts";

const i32 = (xs: number[]) => Int32Array.from(xs);

describe.skipIf(nativeTestsSkipped())("the native kernels", () => {
  setNativeMode("always");
  const k = () => {
    const kernels = nativeKernels();
    if (kernels === undefined) throw new Error(`@car/native did not load: ${nativeStatus().reason}`);
    return kernels;
  };

  it("orders a DAG breadth-first in declaration order with longest-chain levels", () => {
    // 0 -> 2, 1 -> 2, 2 -> 3, 0 -> 3
    const order = new Int32Array(4);
    const level = new Int32Array(4);
    expect(k().levels(i32([0, 0, 0, 2, 4]), i32([0, 1, 2, 0]), order, level)).toBe(4);
    expect([...order]).toEqual([0, 1, 2, 3]);
    expect([...level]).toEqual([0, 0, 1, 2]);
  });

  it("orders fewer than all actions on a cycle", () => {
    const order = new Int32Array(3);
    expect(k().levels(i32([0, 1, 2, 2]), i32([1, 0]), order, new Int32Array(3))).toBe(1);
    expect(order[0]).toBe(2);
  });

  it("answers reachability between actions, through the order and levels given", () => {
    // 3 -> 1 -> 0, and 2 alone: order 2, 3, 1, 0; levels 2, 1, 0, 0
    const graph = [i32([0, 1, 2, 2, 2]), i32([1, 3]), i32([2, 3, 1, 0]), i32([2, 1, 0, 0])] as const;
    // Budget 1024 lets the searches answer; budget 0 leaves every query to the bitset sweep.
    for (const budget of [1024, 0]) {
      const answers = new Uint8Array(6);
      k().reach(...graph, i32([3, 3, 1, 2, 0, 1]), i32([0, 2, 0, 0, 3, 1]), answers, budget);
      expect([...answers]).toEqual([1, 0, 1, 0, 0, 0]);
    }
  });

  it("groups actions by key id in the given order", () => {
    // action 0: keys 1; action 1: keys 0,1; action 2: key 1; order 2,0,1
    const groupStart = new Int32Array(3);
    const members = new Int32Array(4);
    k().group(i32([2, 0, 1]), i32([0, 1, 3, 4]), i32([1, 0, 1, 1]), groupStart, members);
    expect([...groupStart]).toEqual([0, 1, 4]);
    expect([...members]).toEqual([1, 2, 0, 1]);
  });

  it.each([
    ["an index past the graph", () => k().levels(i32([0, 1]), i32([5]), new Int32Array(1), new Int32Array(1))],
    ["a CSR that does not end at the flat length", () => k().levels(i32([0, 2]), i32([0]), new Int32Array(1), new Int32Array(1))],
    ["outputs of the wrong length", () => k().levels(i32([0, 0]), i32([]), new Int32Array(2), new Int32Array(1))],
    ["plain arrays", () => k().levels([0, 0] as unknown as Int32Array, i32([]), new Int32Array(1), new Int32Array(1))],
    ["a query outside the graph", () => k().reach(i32([0, 0]), i32([]), i32([0]), i32([0]), i32([0]), i32([7]), new Uint8Array(1), 8)],
    ["an order that is not topological", () => k().reach(i32([0, 0, 1]), i32([0]), i32([1, 0]), i32([0, 1]), i32([0]), i32([1]), new Uint8Array(1), 8)],
    ["an order that is not a permutation", () => k().reach(i32([0, 0, 0]), i32([]), i32([1, 1]), i32([0, 0]), i32([0]), i32([1]), new Uint8Array(1), 8)],
    ["a negative search budget", () => k().reach(i32([0, 0, 1]), i32([0]), i32([0, 1]), i32([0, 1]), i32([0]), i32([1]), new Uint8Array(1), -1)],
    [
      "a search budget that is not a number",
      () => k().reach(i32([0, 0, 1]), i32([0]), i32([0, 1]), i32([0, 1]), i32([0]), i32([1]), new Uint8Array(1), "8" as unknown as number),
    ],
    ["an order that repeats an action", () => k().group(i32([0, 0]), i32([0, 1, 2]), i32([0, 0]), new Int32Array(2), new Int32Array(2))],
    ["a key id out of range", () => k().group(i32([0]), i32([0, 1]), i32([3]), new Int32Array(2), new Int32Array(1))],
  ])("refuses %s with a TypeError instead of crashing", (_, call) => {
    expect(call).toThrow(TypeError);
  });
});

describe("the loader", () => {
  it("gives no kernels when CAR_NATIVE is off, whatever the binary", () => {
    const previous = setNativeMode("off");
    try {
      expect(nativeKernels()).toBeUndefined();
    } finally {
      setNativeMode(previous);
    }
  });

  it("gives no kernels below the caller's threshold in auto mode", () => {
    const previous = setNativeMode("auto");
    try {
      expect(nativeKernels(10, 100)).toBeUndefined();
    } finally {
      setNativeMode(previous);
    }
  });
});
