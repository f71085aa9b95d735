/**
 * The engine's share of one `car serve` proposal: CPU per one-action
 * proposal through `executeProposalWithReport`, on runtimes built as a
 * server session builds its own (car-server/src/session.ts): an approval
 * gate at `sandbox_edit` over the runtime's own ledger, an admission guard,
 * a supervisor with nobody subscribed, a tool registered by definition
 * only (it runs on the client, through a `toolCaller`), and the proposal
 * parsed from its JSON value first, as `proposal.submit` does. C runtimes
 * (one per connection) submit back to back, as the server bench's clients
 * do; the tool answers on the next microtask.
 *
 * Run after `pnpm build` (it measures the built packages, as the server runs them):
 * `npx tsx --expose-gc bench/proposals.ts [C] [seconds]` (`node --cpu-prof --import tsx` for a profile). Prints µs of CPU per proposal, best of 5.
 */
import { type JsonObject, type JsonValue, parseProposalWithGraph } from "@car/ir";
import { type ApprovalLedger, ApprovalGate } from "@car/policy";
import { type AdmissionGuard, Runtime, type ToolCaller } from "../dist/index.mjs";
import { gc } from "@car/test-kit/measure";

const C = Number(process.argv[2] ?? 50);
const SECONDS = Number(process.argv[3] ?? 2);

/** A session's runtime, as `Session.buildRuntime` makes it in memory. */
function sessionRuntime(id: string): { runtime: Runtime; caller: ToolCaller } {
  let runtime!: Runtime;
  const ledger: ApprovalLedger = {
    record: (record) => runtime.approvals.record(record),
    latest: (fingerprint, now, scope) => runtime.approvals.latest(fingerprint, now, scope),
    consume: (record, now) => runtime.approvals.consume(record, now),
    list: () => runtime.approvals.list(),
  };
  const gate = new ApprovalGate({ ledger, sessionId: id, grantedTier: "sandbox_edit" });
  // The server's guard counts actions and holds a slot; its meter wraps the caller.
  const admission: AdmissionGuard = (proposal) => {
    if (proposal.actions.length > 1000) throw new Error("too many actions");
    return { release: () => {}, wrapCaller: (caller) => caller, committing: () => {}, committed: () => {} };
  };
  runtime = new Runtime({ approvalGate: gate, admission, supervisor: () => undefined, maxInterpolatedBytes: 64 << 20 });
  runtime.registerAll([{ name: "echo" }], []);
  const caller: ToolCaller = async (call) => ({ echoed: call.params as JsonValue });
  return { runtime, caller };
}

function proposalOf(n: number): JsonObject {
  return { actions: [{ id: "a0", type: "tool_call", tool: "echo", parameters: { n, i: 0 } }] };
}

/** Proposals done and CPU µs spent by C sessions submitting back to back for `seconds`. */
async function measure(seconds: number): Promise<{ proposals: number; cpuUs: number }> {
  const sessions = Array.from({ length: C }, (_, i) => ({ id: `s${i}`, ...sessionRuntime(`s${i}`) }));
  let proposals = 0;
  // Everything settles on microtasks, so the clock (not a timer) ends each window.
  let until = 0;
  const loop = async (s: (typeof sessions)[number]): Promise<void> => {
    let n = 0;
    while (performance.now() < until) {
      const parsed = parseProposalWithGraph(proposalOf(n++), { strict: false });
      const { result, report } = await s.runtime.executeProposalWithReport(parsed, undefined, { toolCaller: s.caller, session_id: s.id, rollback: "state" });
      if (result.cost.actions_executed !== 1 || report.refusal !== undefined) throw new Error(`proposal did not run: ${JSON.stringify(result)}`);
      proposals++;
    }
  };
  // Warm-up, then the measured window.
  until = performance.now() + 1000;
  await Promise.all(sessions.map(loop));
  proposals = 0;
  gc?.();
  const c0 = process.cpuUsage();
  until = performance.now() + seconds * 1000;
  await Promise.all(sessions.map(loop));
  const c = process.cpuUsage(c0);
  return { proposals, cpuUs: c.user + c.system };
}

let best = Infinity;
for (let r = 0; r < 5; r++) {
  const { proposals, cpuUs } = await measure(SECONDS);
  const per = cpuUs / proposals;
  best = Math.min(best, per);
  console.log(`run ${r + 1}: ${proposals} proposals, ${per.toFixed(1)} µs CPU per proposal`);
}
console.log(`one-action proposals, C = ${C}, in memory: best ${best.toFixed(1)} µs CPU per proposal`);
