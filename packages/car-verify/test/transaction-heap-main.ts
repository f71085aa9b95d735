/**
 * Child process of `transaction-heap.test.ts`: a cross-proposal
 * `transactionCheck` of 50 proposals × 2,000 actions, every action writing one
 * shared key and reading another that every tenth action writes. Prints a
 * JSON summary; run under `--max-old-space-size=1024`, it must finish.
 */
import { parseProposal } from "@car/ir";
import { transactionCheck } from "../src/index.ts";

const PROPOSALS = Number(process.argv[2] ?? 50);
const ACTIONS = Number(process.argv[3] ?? 2_000);
const proposals = Array.from({ length: PROPOSALS }, (_, p) =>
  parseProposal({
    id: `p${p}`,
    actions: Array.from({ length: ACTIONS }, (_, i) => ({
      id: `a${i}`,
      type: "tool_call",
      tool: "update",
      write_set: i % 10 === 0 ? ["shared", "config"] : ["shared"],
      read_set: ["config"],
    })),
  }),
);
const started = performance.now();
let summary: object;
try {
  const report = transactionCheck(proposals);
  const seen = new Set<string>();
  for (const c of report.conflicts) c.actions.forEach((a, k) => seen.add(`${c.proposal_ids?.[k]}/${a}`));
  summary = { consistent: report.consistent, conflicts: report.conflicts.length, actions_in_conflicts: seen.size };
} catch (error) {
  summary = { error: (error as { code?: string }).code ?? String(error) };
}
const heap = process.memoryUsage().heapUsed;
console.log(JSON.stringify({ ...summary, ms: Math.round(performance.now() - started), heap_mb: Math.round(heap / 2 ** 20) }));
