import type { TraceRule } from "@car/ir";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluateTrace, TraceGate, type TraceRecord } from "./trace-gate.ts";

const P1 = "p1";
const call = (tool: string, run_id = P1, fingerprint?: string) => ({ tool, action_id: "x", run_id, ...(fingerprint ? { fingerprint } : {}) });
const ran = (tool: string, run_id = P1): TraceRecord[] => [
  { type: "dispatched", tool, run_id },
  { type: "succeeded", tool, run_id },
];

describe("only_after", () => {
  const rule: TraceRule = { kind: "only_after", tool: "deploy", after: "run_tests", scope: "proposal" };

  it("refuses X until Y succeeded in the same proposal, with the stable rule name", () => {
    expect(evaluateTrace([rule], [], call("deploy"))).toEqual([
      {
        policy_name: "trace_rule:only_after(deploy,run_tests)",
        action_id: "x",
        reason: "'deploy' may run only after 'run_tests' succeeded in this proposal, and it has not",
      },
    ]);
    expect(evaluateTrace([rule], [{ type: "dispatched", tool: "run_tests", run_id: P1 }], call("deploy"))).toHaveLength(1);
    expect(evaluateTrace([rule], ran("run_tests"), call("deploy"))).toEqual([]);
  });

  it("in proposal scope, another proposal's success does not count; in session scope it does", () => {
    expect(evaluateTrace([rule], ran("run_tests", "p0"), call("deploy"))).toHaveLength(1);
    expect(evaluateTrace([{ ...rule, scope: "session" }], ran("run_tests", "p0"), call("deploy"))).toEqual([]);
  });

  it("gates only its own tool", () => {
    expect(evaluateTrace([rule], [], call("run_tests"))).toEqual([]);
  });
});

describe("never_after", () => {
  const rule: TraceRule = { kind: "never_after", tool: "http_request", after: "read_secret", scope: "session" };

  it("refuses X once Y was dispatched, even if Y failed", () => {
    expect(evaluateTrace([rule], [], call("http_request"))).toEqual([]);
    const failed: TraceRecord[] = [{ type: "dispatched", tool: "read_secret", run_id: "p0" }];
    expect(evaluateTrace([rule], failed, call("http_request"))[0]?.policy_name).toBe("trace_rule:never_after(http_request,read_secret)@session");
  });
});

describe("max_calls", () => {
  it("admits N calls and refuses the next; a refused call takes no slot", () => {
    const gate = new TraceGate();
    gate.register({ kind: "max_calls", tool: "send_email", max_calls: 2, scope: "proposal" });
    expect(gate.admit(call("send_email"))).toEqual([]);
    expect(gate.admit(call("send_email"))).toEqual([]);
    const refused = gate.admit(call("send_email"));
    expect(refused[0]?.reason).toBe("'send_email' may run at most 2 time(s) in this proposal; 2 already ran");
    expect(gate.admit(call("send_email"))).toHaveLength(1);
    // Another proposal has its own budget; ending one forgets only its own facts.
    expect(gate.admit(call("send_email", "p2"))).toEqual([]);
    gate.endRun(P1);
    expect(gate.admit(call("send_email"))).toEqual([]);
  });

  it("max_calls = 0 refuses every call", () => {
    expect(evaluateTrace([{ kind: "max_calls", tool: "t", max_calls: 0, scope: "session" }], [], call("t"))).toHaveLength(1);
  });

  it("check alone never consumes budget", () => {
    const gate = new TraceGate();
    gate.register({ kind: "max_calls", tool: "t", max_calls: 1, scope: "proposal" });
    for (let i = 0; i < 5; i++) expect(gate.check(call("t"))).toEqual([]);
  });
});

describe("requires_approval", () => {
  const rule: TraceRule = { kind: "requires_approval", tool: "deploy", scope: "proposal" };

  it("needs an approval of this exact operation, or of the tool", () => {
    expect(evaluateTrace([rule], [], call("deploy", P1, "fp-a"))).toHaveLength(1);
    expect(evaluateTrace([rule], [{ type: "approved", tool: "deploy", run_id: P1, fingerprint: "fp-b" }], call("deploy", P1, "fp-a"))).toHaveLength(1);
    expect(evaluateTrace([rule], [{ type: "approved", tool: "deploy", run_id: P1, fingerprint: "fp-a" }], call("deploy", P1, "fp-a"))).toEqual([]);
    expect(evaluateTrace([rule], [{ type: "approved", tool: "deploy", run_id: P1 }], call("deploy", P1))).toEqual([]);
    expect(evaluateTrace([rule], [{ type: "approved", tool: "other", run_id: P1 }], call("deploy", P1))).toHaveLength(1);
  });
});

describe("registration", () => {
  it("names, unregisters by name, and keeps the session's past for rules added later", () => {
    const gate = new TraceGate();
    gate.observe({ type: "succeeded", tool: "run_tests", run_id: "p0" });
    const name = gate.register({ kind: "only_after", tool: "deploy", after: "run_tests", scope: "session", name: "tests_first" });
    expect(name).toBe("tests_first");
    expect(gate.names()).toEqual(["tests_first"]);
    expect(gate.check(call("deploy"))).toEqual([]);
    gate.register({ kind: "max_calls", tool: "deploy", max_calls: 0, scope: "proposal" });
    expect(gate.check(call("deploy"))).toHaveLength(1);
    expect(gate.unregister("trace_rule:max_calls(deploy,0)")).toBe(1);
    expect(gate.size).toBe(1);
    expect(gate.check(call("deploy"))).toEqual([]);
  });
});

describe("properties", () => {
  const tools = fc.constantFrom("a", "b", "c");
  const scope = fc.constantFrom("proposal" as const, "session" as const);
  const proposal = fc.constantFrom("p1", "p2");
  const rule: fc.Arbitrary<TraceRule> = fc.oneof(
    fc.record({ kind: fc.constant("only_after" as const), tool: tools, after: tools, scope }),
    fc.record({ kind: fc.constant("never_after" as const), tool: tools, after: tools, scope }),
    fc.record({ kind: fc.constant("max_calls" as const), tool: tools, max_calls: fc.nat(4), scope }),
    fc.record({ kind: fc.constant("requires_approval" as const), tool: tools, scope }),
  );
  const record: fc.Arbitrary<TraceRecord> = fc.oneof(
    fc.record({ type: fc.constant("dispatched" as const), tool: tools, run_id: proposal }),
    fc.record({ type: fc.constant("succeeded" as const), tool: tools, run_id: proposal }),
    fc.record({ type: fc.constant("approved" as const), tool: tools, run_id: proposal }),
  );

  it("admitting calls one by one never lets a max_calls rule through more than N times", () => {
    fc.assert(
      fc.property(fc.nat(5), fc.array(fc.tuple(tools, proposal), { maxLength: 30 }), (max, calls) => {
        const gate = new TraceGate();
        gate.register({ kind: "max_calls", tool: "a", max_calls: max, scope: "session" });
        let admitted = 0;
        for (const [tool, p] of calls) if (gate.admit(call(tool, p)).length === 0 && tool === "a") admitted++;
        return admitted === Math.min(max, calls.filter(([t]) => t === "a").length);
      }),
    );
  });

  it("a longer trace refuses more under never_after / max_calls and less under only_after / requires_approval", () => {
    fc.assert(
      fc.property(rule, fc.array(record, { maxLength: 20 }), fc.nat(20), proposal, (r, trace, cut, p) => {
        const refused = (t: readonly TraceRecord[]) => evaluateTrace([r], t, call(r.tool, p)).length > 0;
        const before = refused(trace.slice(0, cut));
        const after = refused(trace);
        return r.kind === "never_after" || r.kind === "max_calls" ? !before || after : before || !after;
      }),
    );
  });
});
