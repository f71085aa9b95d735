/**
 * Tamper evidence, edited straight in the database file through a second
 * connection: any single changed byte of a stored event (its data, its
 * envelope columns, its hash), a removed event (first, middle, last) and a
 * swapped pair are each reported at the first broken link.
 */
import { INSERT_COLUMNS, SELECT_COLUMNS } from "./event-row.ts";
import type { EventRow } from "./event-row.ts";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "@car/engine";
import { sqlite } from "./sqlite-store.ts";
import type { SqliteStore } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";

let temp: TempDir;
let store: SqliteStore;
let raw: Database.Database;

beforeEach(async () => {
  temp = tempDatabase();
  store = sqlite(temp.db);
  const rt = new Runtime({ store });
  rt.registerTool("t", () => ({ ok: true }));
  await rt.executeProposal({ id: "p1", actions: [{ id: "a", type: "tool_call", tool: "t", parameters: { q: "ü" }, expected_effects: { k: [1, "two"] } }] });
  await rt.executeProposal({ id: "p2", actions: [{ id: "b", type: "state_write", parameters: { key: "k", value: 3 } }] });
  raw = new Database(temp.db);
});
afterEach(async () => {
  raw.close();
  await store.close();
  temp.remove();
});

const row = (seq: number): EventRow => raw.prepare(`SELECT ${SELECT_COLUMNS} FROM events WHERE seq = ?`).get(seq) as EventRow;
const seqs = (): number[] => raw.prepare("SELECT seq FROM events ORDER BY seq").pluck().all() as number[];

/** Every single-character edit of `text`: each position replaced by a different printable ASCII character. */
function* singleByteEdits(text: string): Generator<string> {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const replacement = code === 0x61 ? "b" : "a";
    yield text.slice(0, i) + replacement + text.slice(i + 1);
  }
}

describe("tampering", () => {
  it("verifies untouched", () => {
    expect(store.verifyChain()).toMatchObject({ ok: true, verified: seqs().length });
  });

  it("finds every single-byte edit of every stored event's data and text columns", () => {
    let edits = 0;
    for (const seq of seqs()) {
      const original = row(seq);
      for (const column of ["data", "kind", "proposal_id", "action_id"] as const) {
        const text = original[column];
        if (text === null) continue;
        for (const edited of singleByteEdits(text)) {
          raw.prepare(`UPDATE events SET ${column} = ? WHERE seq = ?`).run(edited, seq);
          const report = store.verifyChain();
          expect(report.ok, `edit ${edits} of event ${seq}'s ${column} found`).toBe(false);
          if (!report.ok) expect(report.broken.seq).toBe(seq);
          edits++;
        }
        raw.prepare(`UPDATE events SET ${column} = ? WHERE seq = ?`).run(text, seq);
      }
    }
    expect(edits).toBeGreaterThan(500);
    expect(store.verifyChain().ok).toBe(true);
    // Hundreds of whole-chain verifications: about 6 s alone, 40 s in CI beside every other suite on two cores.
  }, 180_000);

  it("finds a data edit that keeps its JSON meaning (the stored text is no longer canonical)", () => {
    const seq = seqs()[2]!;
    const original = row(seq).data;
    raw.prepare("UPDATE events SET data = ? WHERE seq = ?").run(` ${original}`, seq);
    expect(store.verifyChain()).toMatchObject({ ok: false, broken: { seq, reason: expect.stringContaining("canonical") } });
  });

  it("finds a single-byte edit of the hash and of every denormalised column", () => {
    const seq = seqs()[3]!;
    const original = row(seq);
    const flipped = Buffer.from(original.hash);
    flipped[10]! ^= 1;
    const edits: [string, unknown][] = [
      ["hash", flipped],
      ["stamp", "2026-01-01T00:00:00Z"],
      ["kind", `${original.kind.slice(0, -1)}x`],
      ["proposal_id", "p9"],
      ["action_id", original.action_id === null ? "z" : `${original.action_id}z`],
      ["ts", original.ts + 1],
      ["seq", 10_000],
    ];
    for (const [column, value] of edits) {
      raw.prepare(`UPDATE events SET ${column} = ? WHERE seq = ?`).run(value, seq);
      const report = store.verifyChain();
      expect(report.ok, `edit of ${column} found`).toBe(false);
      const where = column === "seq" ? 10_000 : seq;
      raw.prepare(`UPDATE events SET ${column} = ? WHERE seq = ?`).run((original as unknown as Record<string, unknown>)[column], where);
    }
    expect(store.verifyChain().ok).toBe(true);
  });

  it("finds a removed first, middle or last event, and a swap of two events' contents", () => {
    const all = seqs();
    for (const seq of [all[0]!, all[4]!, all.at(-1)!]) {
      const saved = row(seq);
      raw.prepare("DELETE FROM events WHERE seq = ?").run(seq);
      const report = store.verifyChain();
      expect(report.ok, `removal of ${seq} found`).toBe(false);
      raw.prepare(`INSERT INTO events (${INSERT_COLUMNS}) VALUES (${INSERT_COLUMNS.replace(/(\w+)/g, "@$1")})`).run({ ...saved, prev: undefined });
    }
    expect(store.verifyChain().ok).toBe(true);
    const [a, b] = [row(all[2]!), row(all[3]!)];
    const swap = raw.prepare("UPDATE events SET kind = ?, proposal_id = ?, action_id = ?, ts = ?, stamp = ?, data = ?, hash = ? WHERE seq = ?");
    swap.run(b.kind, b.proposal_id, b.action_id, b.ts, b.stamp, b.data, b.hash, a.seq);
    swap.run(a.kind, a.proposal_id, a.action_id, a.ts, a.stamp, a.data, a.hash, b.seq);
    const report = store.verifyChain();
    expect(report).toMatchObject({ ok: false, broken: { seq: a.seq } });
  });
});
