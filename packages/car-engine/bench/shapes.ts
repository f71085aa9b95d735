/** The three benchmark shapes as proposals of no-op tool calls, and their raw-Promise floors. */

export interface ShapeAction {
  id: string;
  type: "tool_call";
  tool: "noop";
  parameters: Record<string, never>;
  dependencies: string[];
}

export type Shape = "fan-out" | "chain" | "levels";

/** `n` actions: fan-out (independent), chain (each after the previous) or levels (√n levels × √n, each after two of the level before). */
export function proposalOf(shape: Shape, n: number): { actions: ShapeAction[] } {
  const actions: ShapeAction[] = [];
  if (shape === "levels") {
    const width = Math.round(Math.sqrt(n));
    const depth = Math.round(n / width);
    for (let l = 0; l < depth; l++) {
      for (let c = 0; c < width; c++) {
        const deps = l === 0 ? [] : [`a${l - 1}_${c}`, `a${l - 1}_${(c + 1) % width}`];
        actions.push({ id: `a${l}_${c}`, type: "tool_call", tool: "noop", parameters: {}, dependencies: deps });
      }
    }
    return { actions };
  }
  for (let i = 0; i < n; i++) {
    actions.push({ id: `a${i}`, type: "tool_call", tool: "noop", parameters: {}, dependencies: shape === "chain" && i > 0 ? [`a${i - 1}`] : [] });
  }
  return { actions };
}

const noop = (): null => null;

/** The same shape as bare promises: one promise hop per node, dependencies awaited, no bookkeeping. */
export async function promiseFloor(shape: Shape, n: number): Promise<void> {
  if (shape === "fan-out") {
    await Promise.all(Array.from({ length: n }, () => Promise.resolve().then(noop)));
  } else if (shape === "chain") {
    for (let i = 0; i < n; i++) await Promise.resolve().then(noop);
  } else {
    const width = Math.round(Math.sqrt(n));
    const depth = Math.round(n / width);
    for (let l = 0; l < depth; l++) await Promise.all(Array.from({ length: width }, () => Promise.resolve().then(noop)));
  }
}
