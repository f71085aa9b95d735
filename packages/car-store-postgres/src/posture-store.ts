/**
 * Per-agent postures on PostgreSQL (`always_allow`, `require_approval`,
 * `deny`, for one tier or every tier, stored as tier `*`), shared by every
 * runtime: an operator's change applies to the next action on any host.
 * Changes are audited in the log in the same transaction.
 */
import { rfc3339 } from "@car/ir";
import type { PermissionTier, Posture } from "@car/policy";
import type { PostureEntry, PostureStore } from "@car/engine";
import { ALL_TIERS, postureEntryOf, type PostureRow } from "@car/engine/durable";
import type { AuditedTransaction, ReadQuery } from "./audited-transaction.ts";

/** `updated_at` is a bigint, so it arrives as text. */
type PostgresPostureRow = Omit<PostureRow, "updated_at"> & { updated_at: string };

function entryFrom(row: PostgresPostureRow): PostureEntry {
  return postureEntryOf({ ...row, updated_at: Number(row.updated_at) });
}

export class PostgresPostureStore implements PostureStore {
  readonly #read: ReadQuery;
  readonly #transaction: AuditedTransaction;

  constructor(read: ReadQuery, transaction: AuditedTransaction) {
    this.#read = read;
    this.#transaction = transaction;
  }

  async resolve(agent_id: string, tier: PermissionTier): Promise<Posture | undefined> {
    const { rows } = await this.#read<{ posture: Posture }>(
      "SELECT posture FROM car_postures WHERE agent_id = $1 AND tier IN ($2, '*') ORDER BY tier = '*' LIMIT 1",
      [agent_id, tier],
    );
    return rows[0]?.posture;
  }

  async set(agent_id: string, posture: Posture, tier: PermissionTier | null, now: number): Promise<PostureEntry> {
    return this.#transaction(async (client, audit) => {
      await client.query(
        `INSERT INTO car_postures (agent_id, tier, posture, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (agent_id, tier) DO UPDATE SET posture = EXCLUDED.posture, updated_at = EXCLUDED.updated_at`,
        [agent_id, tier ?? ALL_TIERS, posture, now],
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
    return (await this.#read<PostgresPostureRow>("SELECT agent_id, tier, posture, updated_at::text FROM car_postures ORDER BY agent_id, tier")).rows.map(
      entryFrom,
    );
  }
}
