/**
 * Per-agent postures on PostgreSQL (`always_allow`, `require_approval`,
 * `deny`, for one tier or every tier, stored as tier `*`), shared by every
 * runtime: an operator's change applies to the next action on any host.
 * Changes are audited in the log in the same transaction, and every row is
 * sealed under the audit key (row-seal.ts): a posture written or edited
 * outside CAR is refused (`chain_broken`), never honoured.
 */
import { rfc3339 } from "@car/ir";
import type { PermissionTier, Posture } from "@car/policy";
import type { PostureEntry, PostureStore } from "@car/engine";
import {
  ALL_TIERS,
  type AuditKey,
  postureEntryOf,
  type PostureRow,
  postureSealRow,
  requireCurrentPostures,
  rowSeal,
  sealMatches,
  unsealedRow,
} from "@car/engine/durable";
import type { PoolClient } from "pg";
import type { AuditedTransaction, ReadQuery } from "./audited-transaction.ts";
import { posturesWithEvents } from "./row-currency-sql.ts";

/** `updated_at` is a bigint, so it arrives as text. */
type PostgresPostureRow = Omit<PostureRow, "updated_at"> & { updated_at: string; seal: string | null };

function rowFrom(row: PostgresPostureRow): PostureRow & { seal: string | null } {
  return { ...row, updated_at: Number(row.updated_at) };
}

const SELECT = "SELECT agent_id, tier, posture, updated_at::text, seal FROM car_postures";

/** Every posture row as stored, seal included (what verification checks, in its own transaction). */
export async function postureRows(read: ReadQuery): Promise<(PostureRow & { seal: string | null })[]> {
  return (await read<PostgresPostureRow>(`${SELECT} ORDER BY agent_id, tier`)).rows.map(rowFrom);
}

/** Seals every posture row that has none, in the caller's transaction (rows the store has found the log vouches for). */
export async function sealUnsealedPostures(client: PoolClient, key: AuditKey | undefined): Promise<void> {
  const read: ReadQuery = (sql, params) => client.query(sql, params === undefined ? [] : [...params]);
  for (const row of await postureRows(read))
    if (row.seal === null)
      await client.query("UPDATE car_postures SET seal = $1 WHERE agent_id = $2 AND tier = $3", [
        rowSeal(key, "postures", postureSealRow(row.agent_id, row.tier, row.posture, row.updated_at)),
        row.agent_id,
        row.tier,
      ]);
}

export class PostgresPostureStore implements PostureStore {
  readonly #read: ReadQuery;
  readonly #transaction: AuditedTransaction;
  readonly #key: AuditKey | undefined;

  /** `key`: the audit key the rows are sealed under (none: an unkeyed seal). */
  constructor(read: ReadQuery, transaction: AuditedTransaction, key: AuditKey | undefined) {
    this.#read = read;
    this.#transaction = transaction;
    this.#key = key;
  }

  /**
   * Every row of the agent is checked, seal and currency (row-currency.ts),
   * from one snapshot: an edited, restored or deleted per-tier row must not
   * hand the answer to the all-tier one.
   */
  async resolve(agent_id: string, tier: PermissionTier): Promise<Posture | undefined> {
    const { rows, events, cut } = await posturesWithEvents(this.#read, agent_id);
    for (const row of rows)
      if (!sealMatches(this.#key, "postures", postureSealRow(row.agent_id, row.tier, row.posture, row.updated_at), row.seal))
        throw unsealedRow("postures", `of '${row.agent_id}' for tier ${row.tier}`);
    requireCurrentPostures(agent_id, events, rows, cut);
    return (rows.find((r) => r.tier === tier) ?? rows.find((r) => r.tier === ALL_TIERS))?.posture;
  }

  async set(agent_id: string, posture: Posture, tier: PermissionTier | null, now: number): Promise<PostureEntry> {
    return this.#transaction(async (client, audit) => {
      await client.query(
        `INSERT INTO car_postures (agent_id, tier, posture, updated_at, seal) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (agent_id, tier) DO UPDATE SET posture = EXCLUDED.posture, updated_at = EXCLUDED.updated_at, seal = EXCLUDED.seal`,
        [agent_id, tier ?? ALL_TIERS, posture, now, rowSeal(this.#key, "postures", postureSealRow(agent_id, tier ?? ALL_TIERS, posture, now))],
      );
      audit("posture_set", { agent_id, tier: tier ?? ALL_TIERS, posture }, { timestamp: rfc3339(now) });
      return { agent_id, tier, posture, updated_at: now };
    });
  }

  async clear(agent_id: string, tier: PermissionTier | null): Promise<number> {
    return this.#transaction(async (client, audit) => {
      const { rowCount } =
        tier === null
          ? await client.query("DELETE FROM car_postures WHERE agent_id = $1", [agent_id])
          : await client.query("DELETE FROM car_postures WHERE agent_id = $1 AND tier = $2", [agent_id, tier]);
      const removed = rowCount ?? 0;
      if (removed > 0) audit("posture_cleared", { agent_id, tier: tier ?? ALL_TIERS });
      return removed;
    });
  }

  async list(): Promise<PostureEntry[]> {
    return (await this.rows()).map(postureEntryOf);
  }

  /** Every row as stored, seal included. */
  rows(): Promise<(PostureRow & { seal: string | null })[]> {
    return postureRows(this.#read);
  }
}
