/**
 * `car audit` end to end on PostgreSQL (a cluster this test starts): the
 * approvals and the README demo's run written by the `car` CLI with
 * `--db postgres://…`, then `car audit verify` against it. Intact, it says
 * so; each table it trusts, edited through `psql` as an attacker with write
 * access would — an event, an approval, a posture, a proposal's status, a
 * transition, the database id the anchors name — is a break named by its
 * table and a non-zero exit; `car audit trim` cuts the log, which verify
 * names as a cut, not a break; and a row whose events the cut removed is
 * still proven afterwards.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgres } from "@car/store-postgres";
import { type PostgresCluster, postgresBinDir, startPostgresCluster } from "@car/test-kit/postgres-cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployApprovals, demo, repoRoot } from "./demo.ts";
import { runCar } from "./run-car.ts";

let root: string;
let carHome: string;
let cluster: PostgresCluster;
let url: string;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-audit-pg-")));
  carHome = join(root, "home");
  cluster = await startPostgresCluster();
  url = cluster.createDatabase("cli_audit");
}, 60_000);
afterAll(() => {
  cluster?.stop();
  rmSync(root, { recursive: true, force: true });
});

const car = (args: string[]) => runCar(args, { cwd: repoRoot, env: { CAR_HOME: carHome } });

/** Runs `statement` through `psql` on the test database; returns its unaligned output. */
function psql(statement: string): string {
  const r = spawnSync(
    join(postgresBinDir()!, "psql"),
    ["-h", "127.0.0.1", "-p", String(cluster.port), "-U", "postgres", "-d", "cli_audit", "-v", "ON_ERROR_STOP=1", "-At", "-c", statement],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
  return r.stdout.trim();
}

interface VerifyJson {
  ok: boolean;
  broken?: { seq: number; reason: string; table?: string };
  cuts?: unknown[];
}

async function verify(): Promise<{ code: number | null; report: VerifyJson }> {
  const run = await car(["audit", "verify", "--db", url, "--json"]);
  return { code: run.code, report: JSON.parse(run.stdout) as VerifyJson };
}

describe("car audit on PostgreSQL", () => {
  it("verifies the CLI's own writes: intact, keyed, anchored", async () => {
    for (const approve of deployApprovals(url)) expect((await car(approve)).code).toBe(0);
    expect((await car(["run", ...demo, "--db", url, "--json"])).code).toBe(0);
    // A posture (the CLI sets postures on SQLite only), under the CLI's audit key.
    const store = postgres(url, { auditKeyFile: join(carHome, "audit.key") });
    await store.postures.set("bot", "deny", "full_access", Date.now());
    await store.close();
    expect((await car(["audit", "anchor", "--db", url])).code).toBe(0);

    const ok = await car(["audit", "verify", "--db", url]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^intact: \d+ events verified from the genesis hash; head seq \d+/);
    expect(ok.stdout).toContain("every event's MAC verifies under the audit key");
    expect(ok.stdout).toContain("1 anchor hold");
    const events = (await car(["audit", "query", "--db", url, "--kind", "approval_recorded", "--json"])).stdout.trim().split("\n");
    expect(events).toHaveLength(2);
    const report = await car(["audit", "report", "a1b2c3d4e5f6", "--db", url]);
    expect(report.code).toBe(0);
    expect(report.stdout).toContain("a1b2c3d4e5f6");
  });

  it("names each table it trusts when a row is edited behind its back, and holds again once undone", async () => {
    const stateEvent = psql("SELECT min(seq) FROM car_events WHERE kind = 'state_changed'");
    const databaseId = psql("SELECT value FROM car_meta WHERE key = 'database_id'");
    const edits: { what: string; edit: string; undo: string; broken: RegExp; table?: string }[] = [
      {
        what: "an event",
        edit: `UPDATE car_events SET body = replace(body, '"op":"set"', '"op":"sex"') WHERE seq = ${stateEvent}`,
        undo: `UPDATE car_events SET body = replace(body, '"op":"sex"', '"op":"set"') WHERE seq = ${stateEvent}`,
        broken: /not in canonical form|hash does not match/,
      },
      {
        what: "a forged approval",
        edit: "INSERT INTO car_approvals (fingerprint, decision, expires_at, record, seal) SELECT 'forged', decision, expires_at, record, seal FROM car_approvals ORDER BY id LIMIT 1",
        undo: "DELETE FROM car_approvals WHERE fingerprint = 'forged'",
        broken: /approval \d+/,
        table: "approvals",
      },
      {
        what: "a posture",
        edit: "UPDATE car_postures SET posture = 'always_allow' WHERE agent_id = 'bot'",
        undo: "UPDATE car_postures SET posture = 'deny' WHERE agent_id = 'bot'",
        broken: /posture of 'bot'/,
        table: "postures",
      },
      {
        what: "a proposal's status",
        edit: "UPDATE car_proposals SET status = 'rolled_back' WHERE proposal_id = 'a1b2c3d4e5f6'",
        undo: "UPDATE car_proposals SET status = 'committed' WHERE proposal_id = 'a1b2c3d4e5f6'",
        broken: /proposal 'a1b2c3d4e5f6' is stored as rolled_back/,
        table: "proposals",
      },
      {
        what: "a transition",
        edit: "UPDATE car_transitions SET version = version + 100 WHERE id = (SELECT min(id) FROM car_transitions)",
        undo: "UPDATE car_transitions SET version = version - 100 WHERE id = (SELECT min(id) FROM car_transitions)",
        broken: /transition 1 of key '[^']+' is not the change the log records/,
        table: "transitions",
      },
      {
        what: "the database id the anchors name",
        edit: "UPDATE car_meta SET value = 'another-database' WHERE key = 'database_id'",
        undo: `UPDATE car_meta SET value = '${databaseId}' WHERE key = 'database_id'`,
        broken: /anchor/,
      },
    ];
    for (const { what, edit, undo, broken, table } of edits) {
      psql(edit);
      const { code, report } = await verify();
      // The words once: the first broken link, at its seq.
      const words = what === "an event" ? await car(["audit", "verify", "--db", url]) : undefined;
      psql(undo);
      expect([what, code]).toEqual([what, 1]);
      expect(report.broken?.reason, what).toMatch(broken);
      if (table !== undefined) expect(report.broken?.table, what).toBe(table);
      if (words !== undefined) {
        expect(words.code).toBe(1);
        expect(words.stdout).toMatch(new RegExp(`^broken at seq ${stateEvent}: `));
      }
    }
    expect((await verify()).code, "every edit undone").toBe(0);
  });

  it("names a cut of the log as a cut, not a break, and still proves the rows whose events it removed", async () => {
    const trim = await car(["audit", "trim", "--db", url, "--max-events", "1"]);
    expect(trim.code).toBe(0);
    expect(trim.stdout).toMatch(/^removed \d+ events; the chain now starts after seq \d+/);
    const cut = await car(["audit", "verify", "--db", url]);
    expect(cut.code).toBe(0);
    expect(cut.stdout).toMatch(/^cut: seq 1–\d+ \(\d+ events\) dropped by retention at \S+\n/);
    expect(cut.stdout).toMatch(/\nintact after 1 cut: 1 event verified from the signed checkpoint after seq \d+/);
    expect(cut.stdout).not.toContain("broken");

    // Every event of the demo's run is cut now (only the posture's remains): its status is still proven.
    psql("UPDATE car_proposals SET status = 'rolled_back' WHERE proposal_id = 'a1b2c3d4e5f6'");
    const { code, report } = await verify();
    expect(code).toBe(1);
    expect(report.broken).toMatchObject({ table: "proposals", reason: expect.stringContaining("edited outside CAR") });
    psql("UPDATE car_proposals SET status = 'committed' WHERE proposal_id = 'a1b2c3d4e5f6'");
    expect((await verify()).report).toMatchObject({ ok: true, cuts: [{ act: "retention" }] });
  });
});
