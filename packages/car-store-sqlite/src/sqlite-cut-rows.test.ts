/**
 * After a cut of the log, the rows whose events it removed stay proven:
 * the cut records a digest of each (its checkpoint signs the record), so an older copy
 * of an approval or posture restored with its old, valid seal, an edited
 * proposal status or transition, a deleted row and an inserted one are
 * each reported by `verifyChain` — where the seals alone let them pass —
 * and so is a record rewritten to match, or removed.
 */
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "@car/engine";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";
import { sqlite } from "./sqlite-store.ts";
import type { SqliteStore } from "./sqlite-store.ts";

let temp: TempDir;
let store: SqliteStore;
let raw: Database.Database;
/** The approval and posture rows as they stood before their last change, with their then valid seals. */
let olderApproval: { seal: string };
let olderPosture: { posture: string; updated_at: number; seal: string };

beforeEach(async () => {
  temp = tempDatabase();
  store = sqlite(temp.db, { auditKeyFile: `${temp.dir}/audit.key` });
  const rt = new Runtime({ store });
  rt.registerTool("t", () => ({ ok: true }));
  for (const id of ["p1", "p2"])
    await rt.executeProposal({
      id,
      actions: [
        { id: "a", type: "tool_call", tool: "t", parameters: { q: id } },
        { id: "w", type: "state_write", parameters: { key: `k-${id}`, value: id } },
      ],
    });
  await store.approvals.record({ fingerprint: "f1", decision: "approved", required_tier: "full_access", reviewer: "ops", decided_at: 1, expires_at: null });
  store.postures.set("bot", "always_allow", "full_access", 1_000);
  raw = new Database(temp.db);
  olderApproval = raw.prepare("SELECT seal FROM approvals WHERE id = 1").get() as typeof olderApproval;
  olderPosture = raw.prepare("SELECT posture, updated_at, seal FROM postures WHERE agent_id = 'bot'").get() as typeof olderPosture;
  await store.approvals.revoke(1, "admin", 2_000);
  store.postures.set("bot", "deny", "full_access", 3_000);
  // `events.clear`: every event removed, so every row's events were cut.
  expect(store.enforceRetention(Date.now(), { mode: "truncate", max_events: 0, act: "clear" }).removed).toBeGreaterThan(0);
});

afterEach(async () => {
  raw.close();
  await store.close();
  temp.remove();
});

function brokenTable(): string | undefined {
  const report = store.verifyChain();
  return report.ok ? undefined : report.broken.table;
}

describe("rows whose events a cut removed", () => {
  it("verify intact after the cut, which is named", () => {
    const report = store.verifyChain();
    expect(report).toMatchObject({ ok: true, cuts: [{ act: "clear" }] });
  });

  const edits: [string, string, () => void][] = [
    [
      "an approval's older copy, its revocation deleted and its old seal restored",
      "approvals",
      () => {
        raw.prepare("DELETE FROM revocations WHERE approval_id = 1").run();
        raw.prepare("UPDATE approvals SET seal = ? WHERE id = 1").run(olderApproval.seal);
      },
    ],
    ["an approval row deleted", "approvals", () => raw.prepare("DELETE FROM approvals WHERE id = 1").run()],
    [
      "a posture's older copy with its old seal",
      "postures",
      () =>
        raw
          .prepare("UPDATE postures SET posture = ?, updated_at = ?, seal = ? WHERE agent_id = 'bot'")
          .run(olderPosture.posture, olderPosture.updated_at, olderPosture.seal),
    ],
    ["a posture row deleted", "postures", () => raw.prepare("DELETE FROM postures WHERE agent_id = 'bot'").run()],
    ["a proposal's status", "proposals", () => raw.prepare("UPDATE proposals SET status = 'rolled_back' WHERE proposal_id = 'p1'").run()],
    [
      "a proposal row inserted",
      "proposals",
      () =>
        raw.prepare("INSERT INTO proposals (proposal_id, status, began_at, owner_pid, owner) VALUES ('p9', 'committed', '2026-01-01T00:00:00Z', 1, 'x')").run(),
    ],
    ["a transition", "transitions", () => raw.prepare(`UPDATE transitions SET mutation = '{"op":"set","value":"evil"}' WHERE key = 'k-p1'`).run()],
    ["a transition deleted", "transitions", () => raw.prepare("DELETE FROM transitions WHERE key = 'k-p2'").run()],
    [
      "the cut's record of the rows rewritten to match an edit",
      "checkpoints",
      () => {
        raw.prepare("UPDATE transitions SET key = 'k-p8' WHERE key = 'k-p1'").run();
        raw.prepare("UPDATE meta SET value = replace(value, 'k-p1', 'k-p8') WHERE key = 'cut_rows'").run();
      },
    ],
    ["the cut's record of the rows deleted", "checkpoints", () => raw.prepare("DELETE FROM meta WHERE key = 'cut_rows'").run()],
  ];
  for (const [what, table, edit] of edits)
    it(`reports ${what}`, () => {
      raw.pragma("foreign_keys = OFF");
      edit();
      expect(brokenTable()).toBe(table);
    });

  it("a row changed on the record after the cut is held to its new events, not to the cut", async () => {
    store.postures.set("bot", "require_approval", "full_access", 4_000);
    await store.approvals.record({ fingerprint: "f2", decision: "approved", required_tier: "full_access", reviewer: "ops", decided_at: 5, expires_at: null });
    expect(store.verifyChain().ok).toBe(true);
    // A second cut keeps proving them once their new events are gone too.
    expect(store.enforceRetention(Date.now(), { mode: "truncate", max_events: 0, act: "clear" }).removed).toBeGreaterThan(0);
    expect(store.verifyChain()).toMatchObject({ ok: true, cuts: [{ act: "clear" }, { act: "clear" }] });
    raw.prepare("DELETE FROM postures WHERE agent_id = 'bot'").run();
    expect(brokenTable()).toBe("postures");
  });
});
