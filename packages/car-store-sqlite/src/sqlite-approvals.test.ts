/**
 * The SQLite ledger and postures behind @car/policy's real ApprovalGate:
 * a decision is committed before the gate lets the action run, a standing
 * grant answers after a restart until it is revoked, and a per-agent
 * posture refines the tier rules.
 */
import Database from "better-sqlite3";
import { manualClock, parseProposal } from "@car/ir";
import type { Action } from "@car/ir";
import { ApprovalGate } from "@car/policy";
import type { ApprovalCallback } from "@car/policy";
import { afterEach, beforeEach, expect, it } from "vitest";
import { postureLookup } from "@car/engine";
import { sqlite } from "./sqlite-store.ts";
import type { SqliteStore } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";

let temp: TempDir;
const stores: SqliteStore[] = [];
const clock = manualClock(Date.parse("2026-05-01T00:00:00Z"));

beforeEach(() => {
  temp = tempDatabase();
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  temp.remove();
});

function open(): SqliteStore {
  const store = sqlite(temp.db, { clock });
  stores.push(store);
  return store;
}

const [deploy, edit] = parseProposal({
  actions: [
    { id: "d", type: "tool_call", tool: "deploy_service", parameters: { target: "prod" } },
    { id: "e", type: "tool_call", tool: "write_file", parameters: { path: "a.txt", content: "x" } },
  ],
}).actions as [Action, Action];

function gate(store: SqliteStore, agent: string, approver?: ApprovalCallback): ApprovalGate {
  return new ApprovalGate({
    ledger: store.approvals,
    sessionId: `agent:${agent}`,
    clock,
    posture: postureLookup(store.postures, agent),
    ...(approver !== undefined ? { approver } : {}),
  });
}

it("commits a decision before the gate allows the action; the grant answers after a restart until revoked", async () => {
  const store = open();
  const raw = new Database(temp.db, { readonly: true });
  try {
    const decision = await gate(store, "bot", async () => ({ decision: "approve", reviewer: "conn:ops" })).authorize(deploy);
    expect(decision).toMatchObject({ decision: "allow", required: "full_access" });
    // Another connection already sees it: it is committed, not buffered.
    expect(raw.prepare("SELECT count(*) FROM approvals WHERE decision = 'approved'").pluck().get()).toBe(1);
  } finally {
    raw.close();
  }
  await store.close();

  const again = open();
  let asked = 0;
  const restarted = gate(again, "bot", async () => (asked++, "deny"));
  expect(await restarted.authorize(deploy)).toMatchObject({ decision: "allow", reason: "approved by conn:ops" });
  expect(asked).toBe(0);
  const [grant] = await again.approvals.grants(clock.now());
  await again.approvals.revoke(grant!.id, "admin", clock.now());
  expect(await restarted.evaluate(deploy)).toMatchObject({ decision: "needs_approval" });
  expect(await restarted.authorize(deploy)).toMatchObject({ decision: "deny" });
  expect(asked).toBe(1);
  expect(again.verifyChain().ok).toBe(true);
  expect(again.events.query({ kinds: ["approval_recorded"] }).map((e) => [e.data["decision"], e.data["reviewer"]])).toEqual([
    ["approved", "conn:ops"],
    ["rejected", "approver"],
  ]);
});

it("applies per-agent postures from the database, set by another connection, to the next evaluation", async () => {
  const store = open();
  const other = open();
  const botGate = gate(store, "bot");
  expect((await botGate.evaluate(edit)).decision).toBe("allow");
  other.postures.set("bot", "deny", null, clock.now());
  expect(await botGate.evaluate(edit)).toMatchObject({ decision: "deny", reason: expect.stringContaining("posture") });
  other.postures.set("bot", "require_approval", "sandbox_edit", clock.now());
  expect((await botGate.evaluate(edit)).decision).toBe("needs_approval");
  other.postures.set("bot", "always_allow", "full_access", clock.now());
  expect((await botGate.evaluate(deploy)).decision).toBe("allow");
  expect((await gate(store, "someone-else").evaluate(deploy)).decision).toBe("needs_approval");
  expect(store.events.query({ kinds: ["posture_set"] }).map((e) => e.data["posture"])).toEqual(["deny", "require_approval", "always_allow"]);
});
