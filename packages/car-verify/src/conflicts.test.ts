import { describe, expect, it } from "vitest";
import { parseProposal, stateWrite, toolCall } from "@car/ir";
import { ALL_PAIRS_LIMIT } from "./pairs.ts";
import { verify } from "./verify.ts";

describe("write conflicts on a busy key", () => {
  const n = ALL_PAIRS_LIMIT + 44;

  it("lists every pair up to the limit", () => {
    const actions = Array.from({ length: 20 }, (_, i) => toolCall("t", { i }, { id: `w${i}`, write_set: ["k"] }));
    expect(verify(parseProposal({ actions })).conflicts).toHaveLength((20 * 19) / 2);
  });

  it("beyond the limit reports neighbouring unordered writers and says the list is partial", () => {
    const actions = Array.from({ length: n }, (_, i) => toolCall("t", { i }, { id: `w${i}`, write_set: ["k"] }));
    const result = verify(parseProposal({ actions }));
    expect(result.conflicts).toHaveLength(n - 1);
    expect(result.conflicts[0]).toEqual(["w0", "w1", "k"]);
    expect(result.issues.filter((i) => i.severity === "info").map((i) => i.message)).toEqual([
      `key 'k' has ${n} writers; only neighbours in topological order were checked for write conflicts`,
    ]);
  });

  it("a chain of state_writes to one key is ordered: no conflicts however long", () => {
    const actions = Array.from({ length: n }, (_, i) => stateWrite("k", i, { id: `s${i}` }));
    const result = verify(parseProposal({ actions }));
    expect(result.conflicts).toEqual([]);
    expect(result.issues).toEqual([]);
    expect(result.simulated_state).toEqual({ k: n - 1 });
  });
});
