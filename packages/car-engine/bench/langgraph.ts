/** The same no-op fan-out and chain as LangGraph.js graphs: one async node per action, like the engine's async tool. */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });

export function langGraphOf(shape: "fan-out" | "chain", n: number): { invoke(input: { n: number }, config: { recursionLimit: number }): Promise<unknown> } {
  // Built untyped: the builder's generics track every node name, which does not scale to 1k nodes.
  const graph = new StateGraph(State) as unknown as {
    addNode(name: string, fn: () => Promise<{ n: number }>): void;
    addEdge(from: string, to: string): void;
    compile(): { invoke(input: { n: number }, config: { recursionLimit: number }): Promise<unknown> };
  };
  for (let i = 0; i < n; i++) graph.addNode(`a${i}`, async () => ({ n: 1 }));
  for (let i = 0; i < n; i++) {
    if (shape === "fan-out") {
      graph.addEdge(START, `a${i}`);
      graph.addEdge(`a${i}`, END);
    } else {
      graph.addEdge(i === 0 ? START : `a${i - 1}`, `a${i}`);
    }
  }
  if (shape === "chain") graph.addEdge(`a${n - 1}`, END);
  return graph.compile();
}
