import { describe, expect, it } from "vitest";
import { parseProposal } from "@car/ir";
import { transactionCheck } from "./transaction.ts";
import { judgeTransaction, TRANSACTION_MODES } from "./transaction-mode.ts";

const tool = (id: string, extra: object) => ({ id, type: "tool_call", tool: "t", ...extra });

describe("transactionCheck", () => {
  it("finds a write-write race between unordered writers, not between ordered ones", () => {
    const report = transactionCheck({
      id: "p",
      actions: [tool("a", { write_set: ["k"] }), tool("b", { expected_effects: { k: 1 } }), tool("c", { dependencies: ["a", "b"], write_set: ["k"] })],
    });
    expect(report.consistent).toBe(false);
    expect(report.conflicts).toHaveLength(1);
    expect(report.conflicts[0]).toMatchObject({ kind: "write_write", key: "k", actions: ["a", "b"] });
    expect(report.conflicts[0]!.proposal_ids).toBeUndefined();
  });

  it("finds a read-write hazard between an unordered reader and writer, reader first", () => {
    const report = transactionCheck({
      actions: [tool("w", { write_set: ["k"] }), tool("r", { read_set: ["k"] }), tool("r2", { read_set: ["k"], dependencies: ["w"] })],
    });
    expect(report.conflicts).toEqual([expect.objectContaining({ kind: "read_write", key: "k", actions: ["r", "w"] })]);
  });

  it("reports a pair that both reads and writes one key once, as write_write", () => {
    const report = transactionCheck({ actions: [tool("a", { read_set: ["k"], write_set: ["k"] }), tool("b", { read_set: ["k"], write_set: ["k"] })] });
    expect(report.conflicts.map((c) => c.kind)).toEqual(["write_write"]);
  });

  it("flags a stale read: an assumption's read_version older than the store's", () => {
    const p = { actions: [tool("a", { assumptions: [{ key: "balance", read_version: 3 }] })] };
    const report = transactionCheck(p, { balance: { value: 10, version: 5 } });
    expect(report.conflicts).toEqual([expect.objectContaining({ kind: "stale_read", key: "balance", actions: ["a"] })]);
    expect(report.conflicts[0]!.explanation).toContain("version 3");
    expect(transactionCheck(p, { balance: { value: 10, version: 3 } }).consistent).toBe(true);
  });

  it("flags belief divergence: an expected_value that differs from the stored value, or a missing key", () => {
    const p = { actions: [tool("a", { assumptions: [{ key: "owner", expected_value: "alice" }] })] };
    expect(transactionCheck(p, { owner: { value: "bob", version: 1 } }).conflicts).toEqual([
      expect.objectContaining({ kind: "belief_divergence", key: "owner", actions: ["a"] }),
    ]);
    expect(transactionCheck(p, {}).conflicts[0]!.explanation).toContain("absent");
    expect(transactionCheck(p, { owner: { value: "alice", version: 7 } }).consistent).toBe(true);
  });

  it("across several agents' proposals every shared key is unordered, and findings name the proposals", () => {
    const alice = parseProposal({ id: "alice", actions: [tool("a1", { write_set: ["doc"] })] });
    const bob = parseProposal({ id: "bob", actions: [tool("b1", { write_set: ["doc"] }), tool("b2", { read_set: ["doc"], dependencies: ["b1"] })] });
    const report = transactionCheck([alice, bob], {});
    expect(report.conflicts.map((c) => [c.kind, c.actions, c.proposal_ids])).toEqual([
      ["write_write", ["a1", "b1"], ["alice", "bob"]],
      ["read_write", ["b2", "a1"], ["bob", "alice"]],
    ]);
    expect(report.conflicts[0]!.explanation).toContain("proposal 'alice'");
  });

  it("pairs a key's one writer in one proposal with its one writer, or its reader, in another", () => {
    const alice = parseProposal({ id: "alice", actions: [tool("a1", { write_set: ["doc"] }), tool("a2", { read_set: ["cfg"] })] });
    const bob = parseProposal({
      id: "bob",
      actions: [tool("b1", { write_set: ["doc"] }), tool("b2", { write_set: ["cfg"] }), tool("b3", { write_set: ["own"] })],
    });
    expect(transactionCheck([alice, bob]).conflicts.map((c) => [c.kind, c.key, c.actions])).toEqual([
      ["write_write", "doc", ["a1", "b1"]],
      ["read_write", "cfg", ["a2", "b2"]],
    ]);
  });

  it("refuses a sparse list of proposals with a typed error, like a missing proposal (never a TypeError)", () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the input under test
    expect(() => transactionCheck([, { actions: [] }] as never)).toThrow(expect.objectContaining({ code: "invalid_proposal" }));
  });

  it("a proposal alone is consistent when its writers and readers are ordered", () => {
    expect(transactionCheck({ actions: [tool("w", { write_set: ["k"] }), tool("r", { read_set: ["k"], dependencies: ["w"] })] })).toEqual({
      consistent: true,
      conflicts: [],
    });
  });
});

describe("transaction modes", () => {
  const report = transactionCheck({ actions: [tool("a", { write_set: ["k"] }), tool("b", { write_set: ["k"] })] });

  it("strict refuses on any conflict, warn surfaces them, off ignores them", () => {
    expect(TRANSACTION_MODES).toEqual(["strict", "warn", "off"]);
    expect(judgeTransaction(report, "strict")).toMatchObject({ admit: false, blocking: report.conflicts, warnings: [] });
    expect(judgeTransaction(report, "warn")).toMatchObject({ admit: true, blocking: [], warnings: report.conflicts });
    expect(judgeTransaction(report, "off")).toEqual({ admit: true, blocking: [], warnings: [] });
    expect(judgeTransaction({ consistent: true, conflicts: [] }, "strict").admit).toBe(true);
  });
});

describe("transactionCheck on a busy key", () => {
  it("pairs each of many readers with its neighbouring unordered writers", () => {
    const readers = Array.from({ length: 300 }, (_, i) => tool(`r${i}`, { read_set: ["hot"] }));
    const report = transactionCheck({ actions: [tool("w", { write_set: ["hot"] }), ...readers, tool("w2", { write_set: ["hot"], dependencies: ["w"] })] });
    const hazards = report.conflicts.filter((c) => c.kind === "read_write");
    // Every reader races the first writer; the chained second writer is only a neighbour of the last readers.
    expect(new Set(hazards.filter((c) => c.actions[1] === "w").map((c) => c.actions[0])).size).toBe(300);
    expect(hazards.every((c) => c.actions[0]!.startsWith("r"))).toBe(true);
  });

  it("caps cross-proposal pair work like within-proposal: two proposals of 2,000 writers of one key give a linear set of real conflicts", () => {
    const writers = (prefix: string) => ({
      id: prefix,
      actions: Array.from({ length: 2000 }, (_, i) => tool(`${prefix}${i}`, { parameters: { i }, write_set: ["k"] })),
    });
    const report = transactionCheck([writers("x"), writers("y")]);
    const across = report.conflicts.filter((c) => c.proposal_ids![0] !== c.proposal_ids![1]);
    // Each of one side with the other's first, each other of the other side with this side's first.
    expect(across).toHaveLength(2000 + 1999);
    const covered = new Set(across.flatMap((c) => c.actions));
    expect(covered.size).toBe(4000);
    expect(across.every((c) => c.kind === "write_write" && c.key === "k")).toBe(true);
  });

  it("still lists every cross-proposal pair when both sides are small", () => {
    const small = (prefix: string) => ({
      id: prefix,
      actions: [0, 1, 2].map((i) => tool(`${prefix}${i}`, { parameters: { i }, dependencies: i > 0 ? [`${prefix}${i - 1}`] : [], write_set: ["k"] })),
    });
    const report = transactionCheck([small("x"), small("y")]);
    expect(report.conflicts).toHaveLength(9);
  });
});
