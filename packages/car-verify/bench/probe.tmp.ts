import { parseProposal } from "@car/ir";
import { verify, simulate, transactionCheck } from "../src/index.ts";
import { SHAPES } from "../bench/generate.ts";
const n = Number(process.argv[2]);
for (const [name, gen] of Object.entries(SHAPES)) {
  if (process.argv[3] && process.argv[3] !== name) continue;
  const text = gen(n);
  let t = performance.now();
  const p = parseProposal(JSON.parse(text));
  const base = performance.now() - t;
  const h0 = process.memoryUsage().heapUsed;
  t = performance.now(); const r = verify(p); const tv = performance.now() - t;
  const h1 = process.memoryUsage().heapUsed;
  t = performance.now(); simulate(p); const ts = performance.now() - t;
  t = performance.now(); const tx = transactionCheck(p); const tt = performance.now() - t;
  console.log(name, n, `base ${base.toFixed(0)} verify ${tv.toFixed(0)} (${(tv/base).toFixed(2)}x) sim ${ts.toFixed(0)} tx ${tt.toFixed(0)} issues ${r.issues.length} conflicts ${r.conflicts.length} txc ${tx.conflicts.length} heap+ ${((h1-h0)/n).toFixed(0)}B/action`);
}
