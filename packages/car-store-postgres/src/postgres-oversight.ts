/**
 * Oversight shared by the servers on one PostgreSQL database (@car/engine's
 * `SharedOversight`): parked supervision intents and their decisions in
 * `car_supervision_intents`, each server's supervisors and host
 * subscribers in `car_oversight_subscribers`, and wake-ups between servers
 * over `LISTEN`/`NOTIFY` (notification-channel.ts, oversight-messages.ts).
 *
 * The table is the arbiter: the first decision to land on an undecided
 * intent wins (a supervisor's on any server, or the parking server's own
 * timeout or cancellation), in a transaction that locks the row, and its
 * `NOTIFY` goes out with the commit. Every row is sealed under the audit key
 * (row-seal.ts): a row written or edited outside CAR — a forged decision —
 * reads as a denial by `server`, never as what it says. A server's liveness
 * is its listener's advisory lock; the subscribers and waiting intents of a
 * server whose lock is free (it is gone) are swept.
 */
import { randomInt } from "node:crypto";
import { CarError, type JsonObject, type JsonValue } from "@car/ir";
import type { OversightWakeups, SharedIntentRow, SharedOversight, SharedSubscriber, SupervisionDecision, WaitingApproval } from "@car/engine";
import { type AuditKey, intentSealRow, rowSeal, sealMatches } from "@car/engine/durable";
import type pg from "pg";
import { OVERSIGHT_LOCK_CLASS } from "./migrations.ts";
import { NotificationChannel } from "./notification-channel.ts";
import { decodeMessage, encodeMessage, OVERSIGHT_CHANNEL, type OversightMessage } from "./oversight-messages.ts";

interface IntentRow {
  id: string;
  server_id: string;
  agent_id: string | null;
  intent: string;
  decision: string | null;
  seal: string;
}

const INTENT_COLUMNS = "id, server_id, agent_id, intent, decision, seal";

/** The decision a row whose seal does not match reads as: nothing it says is honoured. */
const UNSEALED: SupervisionDecision = {
  kind: "deny",
  reviewer: "server",
  reason: "the stored intent does not match its seal: it was written or edited outside CAR, so its decision is not honoured",
};

export class PostgresOversight implements SharedOversight {
  readonly serverId: string;
  readonly #lockKey: number;
  #channel: NotificationChannel | undefined;
  /** This server's subscribers, registered again after the listener reconnects (a sweep may have removed them meanwhile). */
  readonly #own = new Map<string, Omit<SharedSubscriber, "server_id">>();
  #publishing: Promise<void> = Promise.resolve();

  constructor(
    private readonly url: string,
    private readonly pool: pg.Pool,
    private readonly key: AuditKey | undefined,
    private readonly ready: Promise<void>,
  ) {
    this.#lockKey = randomInt(1, 0x7fffffff);
    this.serverId = String(this.#lockKey);
  }

  async start(wakeups: OversightWakeups): Promise<void> {
    await this.ready;
    this.#channel = new NotificationChannel(this.url, OVERSIGHT_CHANNEL, [OVERSIGHT_LOCK_CLASS, this.#lockKey], {
      message: (payload) => this.#receive(payload, wakeups),
      reconnected: () => {
        void this.#registerOwn().finally(() => wakeups.resync());
      },
    });
    try {
      await this.#channel.start();
    } catch (error) {
      throw storageError(error, "cannot listen for the other servers' notifications");
    }
  }

  #receive(payload: string, wakeups: OversightWakeups): void {
    const message = decodeMessage(this.key, payload);
    if (message === undefined) return;
    // An approval's sender is whoever recorded it (a server, `car approvals`): every server's waits re-read the ledger.
    if (message.k === "approval") wakeups.approvalRecorded(message.fp);
    else if (message.s === this.serverId) return;
    else if (message.k === "parked") wakeups.intentParked(message.id);
    else if (message.k === "decided") wakeups.intentDecided(message.id);
    else if (message.k === "host") wakeups.hostEvent(message.event);
    else wakeups.subscribersChanged();
  }

  /** `pg_notify`'s arguments; the messages sent here are ids and trimmed host events, always within the bound. */
  #notifyArgs(message: OversightMessage): [string, string] {
    return [OVERSIGHT_CHANNEL, encodeMessage(this.key, this.serverId, message) ?? ""];
  }

  async #query<R extends pg.QueryResultRow>(sql: string, params: readonly unknown[]): Promise<pg.QueryResult<R>> {
    await this.ready;
    try {
      return await this.pool.query<R>(sql, [...params]);
    } catch (error) {
      throw storageError(error, "the shared oversight tables cannot be read or written");
    }
  }

  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.ready;
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storageError(error, "cannot connect to PostgreSQL");
    }
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw storageError(error, "the shared oversight tables cannot be read or written");
    } finally {
      client.release();
    }
  }

  /** One host event at a time, so the other servers receive them in the order they were raised. */
  publishHostEvent(event: JsonObject): void {
    const args = this.#notifyArgs({ k: "host", event });
    this.#publishing = this.#publishing
      .then(() => this.pool.query("SELECT pg_notify($1, $2)", args))
      .then(
        () => {},
        () => {},
      );
  }

  async setSubscriber(subscriber: Omit<SharedSubscriber, "server_id">): Promise<void> {
    this.#own.set(subscriber.subscriber_id, subscriber);
    await this.#upsert(subscriber);
  }

  async #upsert(s: Omit<SharedSubscriber, "server_id">): Promise<void> {
    await this.#query(
      `WITH up AS (
         INSERT INTO car_oversight_subscribers (server_id, subscriber_id, kind, filter) VALUES ($1, $2, $3, $4)
         ON CONFLICT (server_id, subscriber_id) DO UPDATE SET kind = EXCLUDED.kind, filter = EXCLUDED.filter RETURNING 1
       ) SELECT pg_notify($5, $6) FROM up`,
      [this.serverId, s.subscriber_id, s.kind, JSON.stringify(s.filter), ...this.#notifyArgs({ k: "subscribers" })],
    );
  }

  async #registerOwn(): Promise<void> {
    for (const s of this.#own.values()) await this.#upsert(s).catch(() => {});
  }

  async removeSubscriber(subscriber_id: string): Promise<void> {
    this.#own.delete(subscriber_id);
    await this.#query(
      `WITH gone AS (DELETE FROM car_oversight_subscribers WHERE server_id = $1 AND subscriber_id = $2 RETURNING 1)
       SELECT pg_notify($3, $4) FROM (SELECT 1 FROM gone LIMIT 1) g`,
      [this.serverId, subscriber_id, ...this.#notifyArgs({ k: "subscribers" })],
    );
  }

  async subscribers(): Promise<SharedSubscriber[]> {
    await this.#sweep();
    const { rows } = await this.#query<{ server_id: string; subscriber_id: string; kind: string; filter: string }>(
      "SELECT server_id, subscriber_id, kind, filter FROM car_oversight_subscribers ORDER BY server_id, subscriber_id",
      [],
    );
    const out: SharedSubscriber[] = [];
    for (const r of rows) {
      if (r.kind !== "supervision" && r.kind !== "host") continue;
      const filter = parseObject(r.filter);
      if (filter !== undefined) out.push({ server_id: r.server_id, subscriber_id: r.subscriber_id, kind: r.kind, filter });
    }
    return out;
  }

  /** Removes the subscribers and waiting intents of servers that are gone (their listener's lock is free). */
  async #sweep(): Promise<void> {
    await this.#transaction(async (client) => {
      const { rows } = await client.query<{ server_id: string }>(
        `SELECT server_id FROM car_oversight_subscribers WHERE server_id <> $1
         UNION SELECT server_id FROM car_supervision_intents WHERE decision IS NULL AND server_id <> $1
         UNION SELECT server_id FROM car_approval_waits WHERE server_id <> $1`,
        [this.serverId],
      );
      const gone: string[] = [];
      for (const { server_id } of rows) {
        const key = Number(server_id);
        // Not a server id this code writes (a row from outside CAR): gone as well.
        const free =
          !Number.isSafeInteger(key) || key < 1 || key > 0x7fffffff
            ? true
            : (await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1, $2) AS ok", [OVERSIGHT_LOCK_CLASS, key])).rows[0]!.ok;
        if (free) gone.push(server_id);
      }
      if (gone.length === 0) return;
      await client.query("DELETE FROM car_oversight_subscribers WHERE server_id = ANY($1)", [gone]);
      await client.query("DELETE FROM car_approval_waits WHERE server_id = ANY($1)", [gone]);
      await client.query("DELETE FROM car_supervision_intents WHERE server_id = ANY($1) AND decision IS NULL", [gone]);
    });
  }

  #seal(row: Omit<IntentRow, "seal">): string {
    return rowSeal(this.key, "supervision_intents", intentSealRow(row.id, row.server_id, row.agent_id, row.intent, row.decision));
  }

  #sealed(row: IntentRow): boolean {
    return sealMatches(this.key, "supervision_intents", intentSealRow(row.id, row.server_id, row.agent_id, row.intent, row.decision), row.seal);
  }

  async park(row: Omit<SharedIntentRow, "server_id" | "decision">, deadline: number): Promise<void> {
    const stored = { id: row.id, server_id: this.serverId, agent_id: row.agent_id, intent: JSON.stringify(row.intent), decision: null };
    await this.#query(
      `WITH parked AS (
         INSERT INTO car_supervision_intents (id, server_id, agent_id, intent, deadline, seal)
         VALUES ($1, $2, $3, $4, to_timestamp($5::double precision / 1000), $6) RETURNING 1
       ) SELECT pg_notify($7, $8) FROM parked`,
      [stored.id, stored.server_id, stored.agent_id, stored.intent, deadline, this.#seal(stored), ...this.#notifyArgs({ k: "parked", id: row.id })],
    );
  }

  async decide(id: string, decision: SupervisionDecision, options: { atDeadline?: boolean } = {}): Promise<SharedIntentRow | undefined> {
    return this.#transaction(async (client) => {
      const { rows } = await client.query<IntentRow>(
        `SELECT ${INTENT_COLUMNS} FROM car_supervision_intents
         WHERE id = $1 AND decision IS NULL AND ($2 OR deadline > clock_timestamp()) FOR UPDATE`,
        [id, options.atDeadline === true],
      );
      const row = rows[0];
      // A row that does not match its seal was not parked by CAR: there is nothing waiting to decide.
      if (row === undefined || !this.#sealed(row)) return undefined;
      const decided = { ...row, decision: JSON.stringify(decision) };
      await client.query("UPDATE car_supervision_intents SET decision = $2, decided_at = clock_timestamp(), seal = $3 WHERE id = $1", [
        id,
        decided.decision,
        this.#seal(decided),
      ]);
      await client.query("SELECT pg_notify($1, $2)", this.#notifyArgs({ k: "decided", id }));
      return { ...sharedRow(row), decision };
    });
  }

  async read(id: string): Promise<SharedIntentRow | undefined> {
    const { rows } = await this.#query<IntentRow>(`SELECT ${INTENT_COLUMNS} FROM car_supervision_intents WHERE id = $1`, [id]);
    const row = rows[0];
    if (row === undefined) return undefined;
    if (!this.#sealed(row)) return { ...sharedRow(row), decision: UNSEALED };
    return sharedRow(row);
  }

  async pending(): Promise<SharedIntentRow[]> {
    await this.#sweep();
    const { rows } = await this.#query<IntentRow>(
      `SELECT ${INTENT_COLUMNS} FROM car_supervision_intents WHERE decision IS NULL AND deadline > clock_timestamp() ORDER BY ord`,
      [],
    );
    return rows.filter((r) => this.#sealed(r)).map(sharedRow);
  }

  async addWait(wait: WaitingApproval): Promise<void> {
    const body = JSON.stringify(wait);
    await this.#query("INSERT INTO car_approval_waits (server_id, wait_id, body, seal) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", [
      this.serverId,
      wait.id,
      body,
      rowSeal(this.key, "approval_waits", { server_id: this.serverId, wait_id: wait.id, body }),
    ]);
  }

  async removeWait(id: string): Promise<void> {
    await this.#query("DELETE FROM car_approval_waits WHERE server_id = $1 AND wait_id = $2", [this.serverId, id]);
  }

  async waits(): Promise<WaitingApproval[]> {
    await this.#sweep();
    const { rows } = await this.#query<{ server_id: string; wait_id: string; body: string; seal: string }>(
      "SELECT server_id, wait_id, body, seal FROM car_approval_waits ORDER BY ord",
      [],
    );
    const out: WaitingApproval[] = [];
    for (const r of rows) {
      // A row planted outside CAR could show an operator one operation and carry another's fingerprint: not listed.
      if (!sealMatches(this.key, "approval_waits", { server_id: r.server_id, wait_id: r.wait_id, body: r.body }, r.seal)) continue;
      const wait = parseObject(r.body);
      if (wait !== undefined) out.push(wait as unknown as WaitingApproval);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.#publishing;
    await this.#channel?.close();
    await this.#query("DELETE FROM car_approval_waits WHERE server_id = $1", [this.serverId]).catch(() => {});
    if (this.#own.size > 0) {
      this.#own.clear();
      await this.#query(
        `WITH gone AS (DELETE FROM car_oversight_subscribers WHERE server_id = $1 RETURNING 1)
         SELECT pg_notify($2, $3) FROM (SELECT 1 FROM gone LIMIT 1) g`,
        [this.serverId, ...this.#notifyArgs({ k: "subscribers" })],
      ).catch(() => {});
    }
  }
}

/** The row as the engine sees it; a decision that does not parse reads as the unsealed denial. */
function sharedRow(row: IntentRow): SharedIntentRow {
  const intent = parseObject(row.intent) ?? {};
  let decision: SupervisionDecision | undefined;
  if (row.decision !== null) decision = parseDecision(row.decision) ?? UNSEALED;
  return { id: row.id, server_id: row.server_id, agent_id: row.agent_id, intent, decision };
}

function parseObject(text: string): JsonObject | undefined {
  try {
    const v = JSON.parse(text) as JsonValue;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function parseDecision(text: string): SupervisionDecision | undefined {
  const d = parseObject(text);
  if (d === undefined || typeof d["reviewer"] !== "string") return undefined;
  const reason = typeof d["reason"] === "string" ? d["reason"] : undefined;
  if (d["kind"] === "allow") return { kind: "allow", reviewer: d["reviewer"], ...(reason !== undefined ? { reason } : {}) };
  if ((d["kind"] === "deny" || d["kind"] === "escalate") && reason !== undefined) return { kind: d["kind"], reviewer: d["reviewer"], reason };
  return undefined;
}

function storageError(error: unknown, what: string): CarError {
  if (error instanceof CarError) return error;
  return new CarError("storage_error", `${what}: ${error instanceof Error ? error.message : String(error)}`, {}, { cause: error });
}
