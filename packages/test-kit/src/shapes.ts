/**
 * The benchmark workloads several packages measure (the engine's bench and
 * the durable stores' bench): the three shapes as proposals of no-op tool
 * calls, and the two tool shapes.
 */
import type { ActionInput } from "@car/ir";

export interface ShapeAction extends ActionInput {
  id: string;
  type: "tool_call";
  tool: "noop";
  parameters: Record<string, never>;
  dependencies: string[];
}

export type Shape = "fan-out" | "chain" | "levels";

/**
 * The tool under test: `async` is what real tools look like (they do I/O)
 * and the primary workload; `sync` is the `() => null` shape, which takes a
 * promise-free fast path real tools never take.
 */
export type ToolKind = "async" | "sync";

export const tools: Record<ToolKind, () => unknown> = {
  async: async () => ({ ok: true }),
  sync: () => null,
};

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
