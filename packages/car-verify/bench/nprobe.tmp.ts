import { createRequire } from "node:module";
import { dependencyEdges, parseProposal } from "@car/ir";
import { SHAPES } from "./generate.ts";
const native = createRequire(import.meta.url)("../../car-native/car-native.linux-x64-gnu.node");
for (const n of [100_000, 1_000_000]) {
  const p = parseProposal(JSON.parse(SHAPES.random(n)));
  const g = dependencyEdges(p.actions);
  const ts = () => {
    const succs: number[][] = new Array(n);
    for (let i = 0; i < n; i++) succs[i] = [];
    const pending = new Int32Array(n);
    for (let i = 0; i < n; i++) { const ps = g.preds[i]!; pending[i] = ps.length; for (const q of ps) succs[q]!.push(i); }
    const level = new Array<number>(n).fill(0); const order: number[] = [];
    for (let i = 0; i < n; i++) if (pending[i] === 0) order.push(i);
    for (let h = 0; h < order.length; h++) { const i = order[h]!; const nx = level[i]! + 1; for (const s of succs[i]!) { if (level[s]! < nx) level[s] = nx; if (--pending[s]! === 0) order.push(s); } }
    return order.length;
  };
  const nat = () => {
    const start = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) start[i + 1] = start[i]! + g.preds[i]!.length;
    const flat = new Int32Array(start[n]!);
    for (let i = 0, k = 0; i < n; i++) for (const q of g.preds[i]!) flat[k++] = q;
    const order = new Int32Array(n), level = new Int32Array(n);
    return native.levels(start, flat, order, level);
  };
  const natOnly = (() => { const start = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) start[i + 1] = start[i]! + g.preds[i]!.length;
    const flat = new Int32Array(start[n]!);
    for (let i = 0, k = 0; i < n; i++) for (const q of g.preds[i]!) flat[k++] = q;
    return () => native.levels(start, flat, new Int32Array(n), new Int32Array(n)); })();
  for (const [name, f] of [["ts", ts], ["native+flatten", nat], ["native kernel", natOnly]] as const) {
    f(); let best = Infinity; for (let r = 0; r < 5; r++) { const t = performance.now(); f(); best = Math.min(best, performance.now() - t); }
    console.log(n, name, best.toFixed(1), "ms");
  }
}
