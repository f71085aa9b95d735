/**
 * `car run --db`, `car audit` and `car approvals` end to end on one SQLite
 * database: the run's events verify, an edit made behind the CLI's back is
 * reported at its seq, queries filter, a trim keeps the chain verifiable,
 * postures and standing grants are listed, set and revoked; the keyed
 * chain: `car run --state` seeding on the record, a hand-edited state table
 * and a tail cut behind `car audit anchor` reported, the key owner-only.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import { canonicalJson } from "@car/ir";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { borrowedStore, Runtime } from "@car/engine";
import { sqlite } from "@car/store-sqlite";
import { openCarDatabase } from "@car/server/home";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployApprovals, demo, repoRoot } from "./demo.ts";
import { runCar } from "./run-car.ts";
let root: string;
let carHome: string;
let db: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-audit-")));
  carHome = join(root, "home");
  db = join(root, "audit.db");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const car = (args: string[]) => runCar(args, { cwd: repoRoot, env: { CAR_HOME: carHome } });

describe("car audit", () => {
  it("verifies the chain of a run's events, and names the seq of an edited event", async () => {
    for (const approve of deployApprovals(db)) expect((await car(approve)).code).toBe(0);
    expect((await car(["run", ...demo, "--db", db, "--json"])).code).toBe(0);
    const ok = await car(["audit", "verify", "--db", db]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^intact: \d+ events verified from the genesis hash; head seq \d+/);

    // One byte of the database file: a stored state_changed event's "set" becomes "sex".
    // Every commit is in the main file (the WAL is checkpointed when the writer closes).
    expect(existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0).toBe(0);
    // Every copy of such an event in the file is edited: SQLite may keep stale copies in free pages.
    const bytes = readFileSync(db);
    const at = [...bytes.toString("latin1").matchAll(/"key":"[^"]*","op":"set"/g)].map((m) => m.index + m[0].length - 2);
    expect(at.length).toBeGreaterThan(0);
    for (const i of at) bytes[i] = "x".charCodeAt(0);
    writeFileSync(db, bytes);
    const broken = await car(["audit", "verify", "--db", db, "--json"]);
    expect(broken.code).toBe(1);
    for (const i of at) bytes[i] = "t".charCodeAt(0);
    writeFileSync(db, bytes);
    expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, broken: { reason: "the event's hash does not match its content" } });
    expect((await car(["audit", "verify", "--db", db])).code).toBe(0);
  });

  it("queries by proposal, kind and time, as JSON lines or a table", async () => {
    const lines = (await car(["audit", "query", "--db", db, "--proposal", "a1b2c3d4e5f6", "--kind", "state_changed", "--json"])).stdout.trim().split("\n");
    const events = lines.map((l) => JSON.parse(l) as { kind: string; data: { key: string }; hash: string; prev_hash: string });
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.kind === "state_changed" && e.hash.length === 64)).toBe(true);
    const table = await car(["audit", "query", "--db", db, "--kind", "proposal_completed", "--since", "2000-01-01T00:00:00Z"]);
    expect(table.stdout).toMatch(/^SEQ\s+TIME\s+KIND\s+PROPOSAL\s+ACTION\s+DATA\n/);
    expect(table.stdout).toContain("proposal_completed  a1b2c3d4e5f6");
    expect(table.stdout.trim().endsWith("(1 event)")).toBe(true);
    expect((await car(["audit", "query", "--db", db, "--until", "2000-01-01T00:00:00Z", "--json"])).stdout).toBe("");
    expect((await car(["audit", "query", "--db", db, "--since", "yesterday"])).code).toBe(2);
    expect((await car(["audit", "verify", "--db", join(root, "missing.db")])).code).toBe(2);
  });

  it("trims into an archive behind a signed checkpoint and still verifies", async () => {
    const archive = join(root, "old.jsonl");
    const trim = await car(["audit", "trim", "--db", db, "--max-events", "5", "--archive", archive]);
    expect(trim.code).toBe(0);
    expect(trim.stdout).toMatch(/^removed \d+ events \(archived to .*old\.jsonl\); the chain now starts after seq \d+/);
    expect(readFileSync(archive, "utf8").trim().split("\n").length).toBeGreaterThan(0);
    const verify = await car(["audit", "verify", "--db", db]);
    // The cut is on the record (DECISIONS §24): named first, and the verdict says the log was cut.
    const removed = Number(/^removed (\d+) events/.exec(trim.stdout)![1]);
    expect(verify.stdout).toMatch(new RegExp(`^cut: seq 1–${removed} \\(${removed} events\\) archived to .*old\\.jsonl and removed by retention at `));
    expect(verify.stdout).toMatch(/\nintact after 1 cut: 5 events verified from the signed checkpoint after seq \d+/);
    const json = JSON.parse((await car(["audit", "verify", "--db", db, "--json"])).stdout);
    expect(json.cuts).toEqual([expect.objectContaining({ first_removed_seq: 1, last_removed_seq: removed, removed, mode: "archive" })]);
  });
});

describe("car approvals", () => {
  it("sets, lists and clears postures", async () => {
    expect((await car(["approvals", "set-posture", "bot", "deny", "--db", db])).stdout.trim()).toBe("bot: deny for every tier");
    expect((await car(["approvals", "set-posture", "bot", "always_allow", "--tier", "read_only", "--db", db])).code).toBe(0);
    expect((await car(["approvals", "set-posture", "bot", "maybe", "--db", db])).code).toBe(2);
    const listed = JSON.parse((await car(["approvals", "list", "--json", "--db", db])).stdout) as {
      postures: { agent_id: string; tier: string | null; posture: string }[];
    };
    expect(listed.postures.map((p) => [p.tier, p.posture])).toEqual([
      [null, "deny"],
      ["read_only", "always_allow"],
    ]);
    expect((await car(["approvals", "clear-posture", "bot", "--tier", "read_only", "--db", db])).code).toBe(0);
    expect((await car(["approvals", "list", "--db", db])).stdout).toContain("bot  every tier  deny");
  });

  it("lists and revokes a standing grant; the audit chain records both and verifies", async () => {
    const store = sqlite(db, { auditKeyFile: join(carHome, "audit.key") });
    await store.approvals.record({
      fingerprint: "f".repeat(64),
      decision: "approved",
      required_tier: "full_access",
      reviewer: "conn:ops",
      decided_at: Date.now(),
      expires_at: null,
      tool: "deploy",
    });
    // The demo's deploy, approved for the first test, is a standing grant too.
    const grant = (await store.approvals.grants(Date.now())).find((g) => g.fingerprint === "f".repeat(64));
    await store.close();
    expect((await car(["approvals", "list", "--db", db])).stdout).toContain(`#${grant!.id}  deploy  up to full_access  by conn:ops`);
    const revoked = await car(["approvals", "revoke", String(grant!.id), "--by", "admin", "--db", db]);
    expect(revoked.stdout.trim()).toBe(`revoked grant #${grant!.id} (deploy): its operation needs approval again`);
    expect((await car(["approvals", "revoke", String(grant!.id), "--db", db])).code).toBe(1);
    expect((await car(["approvals", "list", "--db", db])).stdout).not.toContain(`#${grant!.id}  `);
    const kinds = (await car(["audit", "query", "--db", db, "--kind", "approval_revoked", "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { data: { revoked_by: string } });
    expect(kinds.map((k) => k.data.revoked_by)).toEqual(["admin"]);
    expect((await car(["audit", "verify", "--db", db])).code).toBe(0);
  });
});

describe("one store, many runtimes", () => {
  it("a session's runtime closing leaves the shared store open for the others", async () => {
    const store = await openCarDatabase(join(root, "shared.db"), { env: { CAR_HOME: carHome } });
    try {
      const first = new Runtime({ store: borrowedStore(store) });
      const second = new Runtime({ store: borrowedStore(store) });
      await first.executeProposal({ id: "s1", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] });
      await first.close();
      await second.executeProposal({ id: "s2", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 2 } }] });
      expect(store.state.get("k")).toBe(2);
      expect(store.verifyChain()).toMatchObject({ ok: true });
    } finally {
      await store.close();
    }
  });
});

describe("car audit and the keyed chain", () => {
  // A database of its own: the cases below edit it by hand.
  const chainDb = join(tmpdir(), `car-audit-chain-${process.pid}.db`);
  afterAll(() => rmSync(chainDb, { force: true }));

  it("records `car run --state` seeding as chained events, with the key created owner-only", async () => {
    for (const approve of deployApprovals(chainDb)) expect((await car(approve)).code).toBe(0);
    expect((await car(["run", ...demo, "--db", chainDb, "--json"])).code).toBe(0);
    expect(statSync(join(carHome, "audit.key")).mode & 0o777).toBe(0o600);
    const lines = (await car(["audit", "query", "--db", chainDb, "--kind", "state_changed", "--json"])).stdout.trim().split("\n");
    const seeded = lines
      .map((l) => JSON.parse(l) as { proposal_id: string | null; data: { key: string; value: unknown } })
      .filter((e) => e.proposal_id === null);
    expect(seeded.map((e) => [e.data.key, e.data.value])).toEqual([["tests_passed", false]]);
    const ok = await car(["audit", "verify", "--db", chainDb]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("is what the log replays to");
    expect(ok.stdout).toContain("no anchor for this database");
  });

  it("names the key of a hand-edited state table", async () => {
    const raw = new Database(chainDb);
    const [key] = raw.prepare("SELECT key FROM state ORDER BY key LIMIT 1").pluck().all() as string[];
    const saved = raw.prepare("SELECT value FROM state WHERE key = ?").pluck().get(key) as string;
    raw.prepare("UPDATE state SET value = '\"edited\"' WHERE key = ?").run(key);
    raw.close();
    const broken = await car(["audit", "verify", "--db", chainDb, "--json"]);
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, broken: { key, reason: expect.stringContaining(`at key '${key}'`) } });
    const again = new Database(chainDb);
    again.prepare("UPDATE state SET value = ? WHERE key = ?").run(saved, key);
    again.close();
    expect((await car(["audit", "verify", "--db", chainDb])).code).toBe(0);
  });

  it("reports a forged approval and an edited posture, naming the table", async () => {
    const forgedDb = join(root, "forged.db");
    expect((await car(["approvals", "set-posture", "bot", "deny", "--db", forgedDb])).code).toBe(0);
    expect((await car(["audit", "verify", "--db", forgedDb, "--anchors", join(root, "none.jsonl")])).code).toBe(0);
    const edits: [string, string, string][] = [
      [
        "approvals",
        `INSERT INTO approvals (fingerprint, decision, decided_at, expires_at, record) VALUES ('${"f".repeat(64)}', 'approved', 0, NULL, '{}')`,
        `DELETE FROM approvals WHERE record = '{}'`,
      ],
      ["postures", "UPDATE postures SET posture = 'always_allow' WHERE agent_id = 'bot'", "UPDATE postures SET posture = 'deny' WHERE agent_id = 'bot'"],
    ];
    for (const [table, edit, undo] of edits) {
      const raw = new Database(forgedDb);
      raw.exec(edit);
      raw.close();
      const broken = await car(["audit", "verify", "--db", forgedDb, "--anchors", join(root, "none.jsonl"), "--json"]);
      expect(broken.code).toBe(1);
      expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, broken: { table } });
      const again = new Database(forgedDb);
      again.exec(undo);
      again.close();
      expect((await car(["audit", "verify", "--db", forgedDb, "--anchors", join(root, "none.jsonl")])).code).toBe(0);
    }
  });

  it("anchors the head in a file and catches a tail cut behind it", async () => {
    // The newest event is then about no state: a posture change.
    expect((await car(["approvals", "set-posture", "bot", "deny", "--db", chainDb])).code).toBe(0);
    const anchored = await car(["audit", "anchor", "--db", chainDb]);
    expect(anchored.code).toBe(0);
    const file = join(carHome, "anchors.jsonl");
    const anchor = JSON.parse(readFileSync(file, "utf8").trim()) as { seq: number; hash: string };
    expect(anchored.stdout).toContain(`anchored seq ${anchor.seq}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse((await car(["audit", "anchor", "--db", chainDb, "--print"])).stdout)).toMatchObject({ seq: anchor.seq, hash: anchor.hash });
    expect((await car(["audit", "verify", "--db", chainDb])).stdout).toContain("1 anchor hold");

    // Cut the newest event and make the recorded head agree: the postures table still has what it set.
    const raw = new Database(chainDb);
    raw.prepare("DELETE FROM events WHERE seq = ?").run(anchor.seq);
    raw.prepare("UPDATE chain_head SET seq = ?, hash = (SELECT lower(hex(hash)) FROM events WHERE seq = ?) WHERE id = 1").run(anchor.seq - 1, anchor.seq - 1);
    const rowLeft = await car(["audit", "verify", "--db", chainDb, "--anchors", join(root, "none.jsonl"), "--json"]);
    expect(rowLeft.code).toBe(1);
    expect(JSON.parse(rowLeft.stdout)).toMatchObject({ ok: false, broken: { table: "postures", reason: expect.stringContaining("the log never set it") } });
    // Remove the row too: now only the anchor still knows.
    raw.prepare("DELETE FROM postures WHERE agent_id = 'bot'").run();
    raw.close();
    expect((await car(["audit", "verify", "--db", chainDb, "--anchors", join(root, "none.jsonl")])).code).toBe(0);
    const broken = await car(["audit", "verify", "--db", chainDb]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`the log ends at seq ${anchor.seq - 1}, but seq ${anchor.seq} was anchored`);
  });

  it("fails when every MAC was stripped and history rewritten and rehashed, naming the first event; without the key it says unkeyed", async () => {
    const strippedDb = join(root, "stripped.db");
    for (const [agent, posture] of [
      ["bot", "deny"],
      ["ci", "require_approval"],
    ])
      expect((await car(["approvals", "set-posture", agent!, posture!, "--db", strippedDb])).code).toBe(0);
    const intact = await car(["audit", "verify", "--db", strippedDb]);
    expect(intact.code).toBe(0);
    expect(intact.stdout).toContain("every event's MAC verifies under the audit key");

    // The attacker has the database, not the key: "deny" becomes "always_allow", every hash is recomputed, the MACs go.
    const raw = new Database(strippedDb);
    let prev = "0".repeat(64);
    type Row = { seq: number; kind: string; proposal_id: string | null; action_id: string | null; ts: number; stamp: string | null; data: string };
    for (const row of raw.prepare("SELECT seq, kind, proposal_id, action_id, ts, stamp, data FROM events ORDER BY seq").all() as Row[]) {
      const data = JSON.parse(row.data.replace('"posture":"deny"', '"posture":"always_allow"'));
      const event = {
        seq: row.seq,
        kind: row.kind,
        proposal_id: row.proposal_id,
        ...(row.action_id === null ? {} : { action_id: row.action_id }),
        timestamp: row.stamp ?? new Date(row.ts).toISOString(),
        data,
        prev_hash: prev,
      };
      prev = createHash("sha256").update(canonicalJson(event)).digest("hex");
      raw.prepare("UPDATE events SET data = ?, hash = ?, mac = NULL WHERE seq = ?").run(canonicalJson(data), Buffer.from(prev, "hex"), row.seq);
    }
    raw.prepare("UPDATE chain_head SET hash = ? WHERE id = 1").run(prev);
    // The postures table must say what the rewritten log says (its seal is the keyed one it had: not checkable without the key).
    raw.prepare("UPDATE postures SET posture = 'always_allow' WHERE posture = 'deny'").run();
    raw.close();

    const broken = await car(["audit", "verify", "--db", strippedDb]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain("broken at seq 1: the event carries no MAC, and an audit key exists");
    // Without the key the rewrite is a consistent chain: said to be unkeyed, a failure only with --require-key.
    const elsewhere = { CAR_HOME: join(root, "no-key-home") };
    const unkeyed = await runCar(["audit", "verify", "--db", strippedDb], { env: elsewhere });
    expect(unkeyed.code).toBe(0);
    expect(unkeyed.stdout).toContain("unkeyed: only integrity against accidental damage is checked");
    // Without the key the row seals are no defence either, and the warning says so.
    expect(unkeyed.stdout).toContain("the approval and posture rows' seals are plain SHA-256 anyone can recompute");
    const required = await runCar(["audit", "verify", "--db", strippedDb, "--require-key"], { env: elsewhere });
    expect(required.code).toBe(1);
    expect(required.stderr).toContain("--require-key: there is no audit key");
  });
});
