/**
 * The tables behind oversight shared by several servers (postgres-oversight.ts),
 * a migration of their own so the rest of the schema is untouched:
 * - `car_oversight_subscribers`: each live server's supervisors (with their
 *   filter) and host subscribers, so a server parks what a supervisor on
 *   another server watches; swept when the server's liveness lock is free.
 * - `car_supervision_intents`: parked intents (the trimmed, value-free
 *   summary supervisors are shown) and the one decision each gets, sealed
 *   under the audit key, so a decision made on one server is durable and
 *   read by the server that parks the proposal.
 * - `car_approval_waits`: each live server's approval waits as
 *   `permission.pending` lists them (sealed: a planted row is not listed).
 */
export const OVERSIGHT_MIGRATION = {
  name: "oversight shared between servers: subscribers, parked supervision intents, approval waits",
  sql: `
      CREATE TABLE car_oversight_subscribers (
        server_id text NOT NULL,
        subscriber_id text NOT NULL,
        kind text NOT NULL,
        filter text NOT NULL,
        PRIMARY KEY (server_id, subscriber_id)
      );
      CREATE TABLE car_supervision_intents (
        id text PRIMARY KEY,
        server_id text NOT NULL,
        agent_id text,
        intent text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        deadline timestamptz NOT NULL,
        decision text,
        decided_at timestamptz,
        seal text NOT NULL,
        ord bigserial NOT NULL
      );
      CREATE INDEX car_supervision_intents_waiting ON car_supervision_intents (ord) WHERE decision IS NULL;
      CREATE TABLE car_approval_waits (
        server_id text NOT NULL,
        wait_id text NOT NULL,
        body text NOT NULL,
        seal text NOT NULL,
        ord bigserial NOT NULL,
        PRIMARY KEY (server_id, wait_id)
      );
    `,
} as const;
