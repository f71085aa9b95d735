/**
 * Per-agent postures in SQLite: for an agent, `always_allow`,
 * `require_approval` or `deny`, for one tier or for every tier (stored as
 * tier `*`). Read on every gate evaluation, so an operator's change (`car
 * approvals set-posture`, possibly from another process) applies to the next
 * action. Changes are audited in the event log.
 */
import { rfc3339 } from "@car/ir";
import type { PermissionTier, Posture } from "@car/policy";
import type { PostureEntry, PostureStore } from "@car/engine";
import { ALL_TIERS, postureEntryOf, type PostureRow } from "@car/engine/durable";
import type { SqliteDatabase } from "./schema.ts";
import type { StoreWriter } from "./store-writer.ts";

export class SqlitePostureStore implements PostureStore {
  readonly #db: SqliteDatabase;
  readonly #writer: StoreWriter;
  readonly #resolve;

  constructor(db: SqliteDatabase, writer: StoreWriter) {
    this.#db = db;
    this.#writer = writer;
    this.#resolve = db.prepare("SELECT posture FROM postures WHERE agent_id = ? AND tier IN (?, '*') ORDER BY tier = '*' LIMIT 1").pluck();
  }

  resolve(agent_id: string, tier: PermissionTier): Posture | undefined {
    return this.#resolve.get(agent_id, tier) as Posture | undefined;
  }

  set(agent_id: string, posture: Posture, tier: PermissionTier | null, now: number): PostureEntry {
    return this.#writer.atomically(() => {
      this.#db
        .prepare(
          "INSERT INTO postures (agent_id, tier, posture, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (agent_id, tier) DO UPDATE SET posture = excluded.posture, updated_at = excluded.updated_at",
        )
        .run(agent_id, tier ?? ALL_TIERS, posture, now);
      this.#writer.audit("posture_set", { agent_id, tier: tier ?? ALL_TIERS, posture }, { timestamp: rfc3339(now) });
      return { agent_id, tier, posture, updated_at: now };
    });
  }

  clear(agent_id: string, tier: PermissionTier | null): number {
    return this.#writer.atomically(() => {
      const removed =
        tier === null
          ? this.#db.prepare("DELETE FROM postures WHERE agent_id = ?").run(agent_id).changes
          : this.#db.prepare("DELETE FROM postures WHERE agent_id = ? AND tier = ?").run(agent_id, tier).changes;
      if (removed > 0) this.#writer.audit("posture_cleared", { agent_id, tier: tier ?? ALL_TIERS });
      return removed;
    });
  }

  list(): PostureEntry[] {
    return (this.#db.prepare("SELECT agent_id, tier, posture, updated_at FROM postures ORDER BY agent_id, tier").all() as PostureRow[]).map(postureEntryOf);
  }
}
