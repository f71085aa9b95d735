/**
 * `verify` with trace rules over N unordered actions (issue 35 §3): the
 * static trace-rule check must stay linear. `pnpm --filter @car/verify
 * exec tsx --conditions=source bench/trace-rules.ts [sizes…]`.
 */
import type { TraceRule } from "@car/ir";
import { parseProposal } from "@car/ir";
import { verify } from "../src/index.ts";

const RULES: TraceRule[] = [
  { kind: "only_after", tool: "deploy", after: "run_tests", scope: "proposal" },
  { kind: "never_after", tool: "http_request", after: "read_secret", scope: "proposal" },
  { kind: "requires_approval", tool: "deploy", scope: "proposal" },
];
const TOOLS = ["deploy", "run_tests", "http_request", "read_secret"];
const sizes = process.argv.slice(2).map(Number);
for (const n of sizes.length > 0 ? sizes : [10_000, 50_000, 200_000]) {
  const proposal = parseProposal({ id: "p", actions: Array.from({ length: n }, (_, i) => ({ id: `a${i}`, type: "tool_call", tool: TOOLS[i % 4] })) });
  const started = performance.now();
  const without = verify(proposal).issues.length;
  const base = performance.now() - started;
  const t = performance.now();
  const issues = verify(proposal, { traceRules: RULES }).issues.length - without;
  console.log(
    `${n} unordered actions: verify ${base.toFixed(0)} ms, with ${RULES.length} trace rules ${(performance.now() - t).toFixed(0)} ms, ${issues} trace issues`,
  );
}
