/**
 * The audit chain from the CLI: `car run --state` seeding is on the record,
 * a state table edited by hand and a tail cut after `car audit anchor` are
 * reported by `car audit verify`, and the audit key is created owner-only.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";

const repoRoot = new URL("../../../", import.meta.url).pathname;
const demo = ["examples/deploy/proposal.json", "--tools", "examples/deploy/tools.mjs", "--policies", "examples/deploy/policies", "--state", "examples/deploy/state.json"];
let root: string;
let carHome: string;
let db: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-audit-chain-")));
  carHome = join(root, "home");
  db = join(root, "chain.db");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const car = (args: string[]) => runCar(args, { cwd: repoRoot, env: { CAR_HOME: carHome } });

describe("car audit and the keyed chain", () => {
  it("records `car run --state` seeding as chained events, with the key created owner-only", async () => {
    expect((await car(["run", ...demo, "--db", db, "--json"])).code).toBe(0);
    expect(statSync(join(carHome, "audit.key")).mode & 0o777).toBe(0o600);
    const lines = (await car(["audit", "query", "--db", db, "--kind", "state_changed", "--json"])).stdout.trim().split("\n");
    const seeded = lines.map((l) => JSON.parse(l) as { proposal_id: string | null; data: { key: string; value: unknown } }).filter((e) => e.proposal_id === null);
    expect(seeded.map((e) => [e.data.key, e.data.value])).toEqual([["tests_passed", false]]);
    const ok = await car(["audit", "verify", "--db", db]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("is what the log replays to");
    expect(ok.stdout).toContain("no anchor for this database");
  });

  it("names the key of a hand-edited state table", async () => {
    const raw = new Database(db);
    const [key] = raw.prepare("SELECT key FROM state ORDER BY key LIMIT 1").pluck().all() as string[];
    const saved = raw.prepare("SELECT value FROM state WHERE key = ?").pluck().get(key) as string;
    raw.prepare("UPDATE state SET value = '\"edited\"' WHERE key = ?").run(key);
    raw.close();
    const broken = await car(["audit", "verify", "--db", db, "--json"]);
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, broken: { key, reason: expect.stringContaining(`at key '${key}'`) } });
    const again = new Database(db);
    again.prepare("UPDATE state SET value = ? WHERE key = ?").run(saved, key);
    again.close();
    expect((await car(["audit", "verify", "--db", db])).code).toBe(0);
  });

  it("anchors the head in a file and catches a tail cut behind it", async () => {
    // The newest event is then about no state: a posture change.
    expect((await car(["approvals", "set-posture", "bot", "deny", "--db", db])).code).toBe(0);
    const anchored = await car(["audit", "anchor", "--db", db]);
    expect(anchored.code).toBe(0);
    const file = join(carHome, "anchors.jsonl");
    const anchor = JSON.parse(readFileSync(file, "utf8").trim()) as { seq: number; hash: string };
    expect(anchored.stdout).toContain(`anchored seq ${anchor.seq}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse((await car(["audit", "anchor", "--db", db, "--print"])).stdout)).toMatchObject({ seq: anchor.seq, hash: anchor.hash });
    expect((await car(["audit", "verify", "--db", db])).stdout).toContain("1 anchor hold");

    // Cut the newest event and make the recorded head agree: only the anchor still knows.
    const raw = new Database(db);
    raw.prepare("DELETE FROM events WHERE seq = ?").run(anchor.seq);
    raw.prepare("UPDATE chain_head SET seq = ?, hash = (SELECT hash FROM events WHERE seq = ?) WHERE id = 1").run(anchor.seq - 1, anchor.seq - 1);
    raw.close();
    expect((await car(["audit", "verify", "--db", db, "--anchors", join(root, "none.jsonl")])).code).toBe(0);
    const broken = await car(["audit", "verify", "--db", db]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`the log ends at seq ${anchor.seq - 1}, but seq ${anchor.seq} was anchored`);
  });
});
