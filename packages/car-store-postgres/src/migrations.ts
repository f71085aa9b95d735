/**
 * Versioned schema migrations. Every runtime applies the missing ones on
 * start, one transaction per migration, under an advisory lock so runtimes
 * starting together do not race; the applied versions are recorded in
 * `car_migrations`, which makes starting again a no-op. A database whose
 * schema is newer than this code knows is refused rather than guessed at.
 *
 * Layout (all tables prefixed `car_`, so the backend can share a database):
 * - `car_state`: one row per key ever written or locked. `value` is the JSON
 *   text (byte-exact, unlike jsonb); `present = false` is a deleted (or
 *   merely locked) key, which keeps its version. `txid` is the writing
 *   transaction, so a runtime refreshes its cache with only the rows changed
 *   since its last snapshot's horizon.
 * - `car_events`: the audit log, in commit order by `seq`; `body` is the
 *   event's canonical (JCS) text, which `hash` covers.
 * - `car_log_head`: the chain's newest seq and hash (one row; locked by the
 *   transaction appending to the log), so a truncated tail is detectable.
 * - `car_proposals`: proposals begun, their outcome and the runtime running
 *   them (for marking the proposals of a dead runtime interrupted).
 * - `car_approvals`, `car_revocations`, `car_postures`: the approval ledger
 *   and per-agent postures.
 * - `car_events.mac` (v2): each event's MAC under the audit key, which the
 *   database never sees; `car_meta.database_id`: the id anchors name.
 * - `car_approvals.seal`, `car_postures.seal` (v3): each row's seal under
 *   the audit key (row-seal.ts), so a row written outside CAR is refused.
 * - `car_runs`, `car_run_records` (v4): agent run traces (`runs.*`).
 * - partial indexes on `car_events` (v5): the approval events of a
 *   fingerprint and the posture events of an agent, which every run-time
 *   read of those rows checks them against (row-currency-sql.ts).
 * - `car_checkpoints` (v6): the signed checkpoint each cut of the log leaves.
 * - `car_oversight_subscribers`, `car_supervision_intents` (v7): oversight
 *   shared between servers (oversight-schema.ts).
 * - `car_transitions` (v8): the transition record (transition-record.ts),
 *   filled from the log for a database written before it.
 * - `car_proposals.run_id` (v9): the run a row is of (DECISIONS §20), which
 *   recovery finds the run's dispatch intents by; NULL on rows written
 *   before it (recovery reads those by time, as it did).
 */
import { CarError } from "@car/ir";
import type { PoolClient } from "pg";
import { OVERSIGHT_MIGRATION } from "./oversight-schema.ts";
import { ROW_CURRENCY_INDEXES } from "./row-currency-sql.ts";
import { TRANSITIONS_MIGRATION } from "./transition-record.ts";

/** Advisory-lock class ids (the first key of the two-key form), chosen to be unlikely in other applications. */
export const MIGRATION_LOCK_CLASS = 0x43415201;
export const RUNTIME_LOCK_CLASS = 0x43415203;
/** Held by a server's oversight listener for as long as its connection lives (postgres-oversight.ts). */
export const OVERSIGHT_LOCK_CLASS = 0x43415204;

interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Runs after `sql` in the same transaction: rows a new table must start with. */
  backfill?(client: PoolClient): Promise<void>;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "state, event log, proposals, approvals, postures",
    sql: `
      CREATE TABLE car_state (
        key text PRIMARY KEY,
        value text,
        present boolean NOT NULL,
        version bigint NOT NULL,
        ord bigserial NOT NULL,
        txid xid8 NOT NULL DEFAULT pg_current_xact_id()
      );
      CREATE INDEX car_state_txid ON car_state (txid);

      CREATE TABLE car_events (
        seq bigint PRIMARY KEY,
        proposal_id text,
        action_id text,
        kind text NOT NULL,
        ts timestamptz NOT NULL,
        body text NOT NULL,
        hash text NOT NULL
      );
      CREATE INDEX car_events_proposal ON car_events (proposal_id, seq);
      CREATE INDEX car_events_action ON car_events (action_id, seq);
      CREATE INDEX car_events_kind ON car_events (kind, seq);
      CREATE INDEX car_events_ts ON car_events (ts);

      CREATE TABLE car_log_head (
        id integer PRIMARY KEY CHECK (id = 1),
        seq bigint NOT NULL,
        hash text NOT NULL
      );
      INSERT INTO car_log_head VALUES (1, 0, '${"0".repeat(64)}');

      -- Appends events at the log head, under its row lock: the caller sends
      -- each event's canonical text in three parts around the two values only
      -- known here (the previous hash and the seq), so the lock is held for
      -- this one call, not for a round trip to the client. Returns the first
      -- seq, the hash the first event links to and every event's hash.
      CREATE FUNCTION car_append_events(p_proposals text[], p_actions text[], p_kinds text[], p_stamps text[], p_heads text[], p_mids text[], p_tails text[])
      RETURNS TABLE (first_seq bigint, linked_to text, hashes text[]) LANGUAGE plpgsql AS $$
      DECLARE h_seq bigint; h_hash text; body text;
      BEGIN
        SELECT h.seq, h.hash INTO h_seq, h_hash FROM car_log_head h WHERE h.id = 1 FOR UPDATE;
        first_seq := h_seq + 1;
        linked_to := h_hash;
        hashes := ARRAY[]::text[];
        FOR i IN 1 .. coalesce(array_length(p_kinds, 1), 0) LOOP
          h_seq := h_seq + 1;
          body := p_heads[i] || h_hash || p_mids[i] || h_seq || p_tails[i];
          h_hash := encode(sha256(convert_to(body, 'UTF8')), 'hex');
          hashes := hashes || h_hash;
          INSERT INTO car_events (seq, proposal_id, action_id, kind, ts, body, hash)
          VALUES (h_seq, p_proposals[i], p_actions[i], p_kinds[i], p_stamps[i]::timestamptz, body, h_hash);
        END LOOP;
        UPDATE car_log_head SET seq = h_seq, hash = h_hash WHERE id = 1;
        RETURN NEXT;
      END $$;

      -- Records a proposal's outcome; refuses (SQLSTATE CAR01) when the
      -- proposal is no longer executing in this runtime (another runtime
      -- marked it interrupted), which aborts the whole commit.
      CREATE FUNCTION car_finish_proposal(p_id text, p_status text, p_runtime integer, p_began text) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO car_proposals AS p (proposal_id, status, runtime_key, began_at) VALUES (p_id, p_status, p_runtime, p_began)
        ON CONFLICT (proposal_id) DO UPDATE SET status = EXCLUDED.status
        WHERE p.status = 'executing' AND p.runtime_key = EXCLUDED.runtime_key;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'proposal % is no longer executing in this runtime (marked interrupted by another runtime?)', p_id USING ERRCODE = 'CAR01';
        END IF;
      END $$;

      CREATE TABLE car_proposals (
        proposal_id text PRIMARY KEY,
        status text NOT NULL,
        runtime_key integer NOT NULL,
        began_at text NOT NULL
      );
      CREATE INDEX car_proposals_executing ON car_proposals (runtime_key) WHERE status = 'executing';

      CREATE TABLE car_approvals (
        id bigserial PRIMARY KEY,
        fingerprint text NOT NULL,
        decision text NOT NULL,
        expires_at bigint,
        record text NOT NULL
      );
      CREATE INDEX car_approvals_fingerprint ON car_approvals (fingerprint, id);
      CREATE TABLE car_revocations (
        approval_id bigint PRIMARY KEY REFERENCES car_approvals (id),
        revoked_at bigint NOT NULL,
        revoked_by text NOT NULL
      );

      CREATE TABLE car_postures (
        agent_id text NOT NULL,
        tier text NOT NULL,
        posture text NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (agent_id, tier)
      );
    `,
  },
  {
    version: 2,
    name: "event MACs under the audit key, database id for anchors",
    sql: `
      ALTER TABLE car_events ADD COLUMN mac text;
      CREATE TABLE car_meta (key text PRIMARY KEY, value text NOT NULL);
      INSERT INTO car_meta VALUES ('database_id', md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text));
    `,
  },
  {
    version: 3,
    name: "row seals on approvals and postures",
    sql: `
      ALTER TABLE car_approvals ADD COLUMN seal text;
      ALTER TABLE car_postures ADD COLUMN seal text;
    `,
  },
  {
    version: 4,
    name: "agent run traces",
    sql: `
      CREATE TABLE car_runs (
        run_id text PRIMARY KEY,
        agent_id text NOT NULL,
        intent text NOT NULL,
        started_at text NOT NULL,
        ended_at text,
        status text NOT NULL,
        turn_count integer NOT NULL,
        record_count integer NOT NULL,
        ord bigserial NOT NULL
      );
      CREATE INDEX car_runs_agent ON car_runs (agent_id, started_at);
      CREATE TABLE car_run_records (
        run_id text NOT NULL REFERENCES car_runs (run_id),
        seq integer NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (run_id, seq)
      );
    `,
  },
  // Migrations 5 and 6 are the audit's (row currency, log cuts); each is a step of its own so other changes can be ordered around them.
  {
    version: 5,
    name: "row currency: log indexes for approval and posture events",
    sql: ROW_CURRENCY_INDEXES,
  },
  {
    version: 6,
    name: "log cuts: signed checkpoints",
    sql: `
      CREATE TABLE car_checkpoints (
        id bigserial PRIMARY KEY,
        body text NOT NULL,
        signature text NOT NULL
      );
    `,
  },
  { version: 7, ...OVERSIGHT_MIGRATION },
  { version: 8, ...TRANSITIONS_MIGRATION },
  {
    version: 9,
    name: "run identity: the run a proposals row is of",
    sql: "ALTER TABLE car_proposals ADD COLUMN run_id text;",
  },
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** Applies every missing migration; returns the versions it applied (empty when the schema was current). */
export async function migrate(client: PoolClient): Promise<number[]> {
  await client.query("SELECT pg_advisory_lock($1, 0)", [MIGRATION_LOCK_CLASS]);
  try {
    await client.query(
      "CREATE TABLE IF NOT EXISTS car_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const { rows } = await client.query<{ version: number }>("SELECT version FROM car_migrations ORDER BY version");
    const applied = new Set(rows.map((r) => r.version));
    const newest = rows.at(-1)?.version ?? 0;
    if (newest > SCHEMA_VERSION) {
      throw new CarError("storage_error", `the database schema is at version ${newest}, newer than this runtime's ${SCHEMA_VERSION}: upgrade @car/engine`);
    }
    const done: number[] = [];
    for (const m of MIGRATIONS) {
      if (applied.has(m.version)) continue;
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await m.backfill?.(client);
        await client.query("INSERT INTO car_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      }
      done.push(m.version);
    }
    return done;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1, 0)", [MIGRATION_LOCK_CLASS]);
  }
}
