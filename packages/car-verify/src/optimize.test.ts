import { describe, expect, it } from "vitest";
import { buildDag, parseProposal } from "@car/ir";
import { optimize } from "./optimize.ts";
import { simulate } from "./simulate.ts";
import { verify } from "./verify.ts";
import { DEFAULT_PROBES } from "./equivalent.ts";

const p = parseProposal({
  id: "p",
  actions: [
    { id: "read_cfg", type: "tool_call", tool: "t", state_dependencies: ["cfg", "later"] },
    { id: "build", type: "tool_call", tool: "b", expected_effects: { artifact: "a.tgz", later: 1 } },
    { id: "deploy", type: "tool_call", tool: "d", state_dependencies: ["artifact", "ghost", "ghost"], expected_effects: { deployed: true } },
  ],
});

describe("optimize", () => {
  it("removes dependencies on keys no earlier action writes and keeps real ones", () => {
    const out = optimize(p);
    expect(out.actions.map((a) => a.state_dependencies)).toEqual([[], [], ["artifact"]]);
  });

  it("keeps each phantom's gate as an exists precondition and its key in the read set", () => {
    const out = optimize(p);
    expect(out.actions[0]!.preconditions.map((c) => [c.key, c.operator])).toEqual([
      ["cfg", "exists"],
      ["later", "exists"],
    ]);
    expect(out.actions[0]!.read_set).toEqual(["cfg", "later"]);
    expect(out.actions[2]!.preconditions.map((c) => c.key)).toEqual(["ghost"]);
  });

  it("never reorders or removes actions, never deepens levels, and does not mutate its input", () => {
    const before = JSON.stringify(p);
    const out = optimize(p);
    expect(out.actions.map((a) => a.id)).toEqual(p.actions.map((a) => a.id));
    expect(buildDag(out.actions).length).toBeLessThanOrEqual(buildDag(p.actions).length);
    expect(buildDag(out.actions)).toEqual(buildDag(p.actions));
    expect(JSON.stringify(p)).toBe(before);
    expect(out).not.toBe(p);
  });

  it("preserves simulate on the default probes and on a state that satisfies every gate", () => {
    for (const probe of [...DEFAULT_PROBES, { cfg: 1, later: 0, ghost: true }]) {
      expect(simulate(optimize(p), probe)).toEqual(simulate(p, probe));
    }
  });

  it("keeps verify's verdict: a missing phantom key is still an error, now as a failed exists precondition", () => {
    const out = optimize(p);
    expect(verify(out).valid).toBe(false);
    expect(verify(out).issues.map((i) => i.message)).toContain(
      "action 'deploy': precondition failed: 'ghost' exists; found absent: key 'ghost' does not exist (was state dependency 'ghost', which no earlier action writes) — the precondition will fail",
    );
    expect(verify(out, { state: { cfg: 1, later: 0, ghost: true } }).valid).toBe(true);
  });

  it("does not add a second exists gate when one is already declared", () => {
    const q = parseProposal({
      actions: [{ id: "a", type: "tool_call", tool: "t", state_dependencies: ["k"], preconditions: [{ key: "k", operator: "exists" }], read_set: ["k"] }],
    });
    const out = optimize(q);
    expect(out.actions[0]!.preconditions).toHaveLength(1);
    expect(out.actions[0]!.read_set).toEqual(["k"]);
  });
});
