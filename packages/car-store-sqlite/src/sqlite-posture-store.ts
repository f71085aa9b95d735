/**
 * Per-agent postures in SQLite: for an agent, `always_allow`,
 * `require_approval` or `deny`, for one tier or for every tier (stored as
 * tier `*`). Read on every gate evaluation, so an operator's change (`car
 * approvals set-posture`, possibly from another process) applies to the next
 * action. Changes are audited in the event log, and every row is sealed
 * (row-seal.ts): a posture written or edited outside CAR is refused
 * (`chain_broken`), never honoured.
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
import { logWasCut, postureEvents } from "./row-currency-sql.ts";
import type { SqliteDatabase } from "./schema.ts";
import type { StoreWriter } from "./store-writer.ts";

export class SqlitePostureStore implements PostureStore {
  readonly #db: SqliteDatabase;
  readonly #writer: StoreWriter;
  readonly #key: AuditKey | undefined;
  readonly #resolve: (agent_id: string) => PostureRow[];

  /** `key`: the audit key the rows are sealed under (none: an unkeyed seal). */
  constructor(db: SqliteDatabase, writer: StoreWriter, key: AuditKey | undefined) {
    this.#db = db;
    this.#writer = writer;
    this.#key = key;
    const ofAgent = db.prepare("SELECT agent_id, tier, posture, updated_at, seal FROM postures WHERE agent_id = ?");
    this.#resolve = db.transaction((agent_id: string) => {
      const rows = ofAgent.all(agent_id) as (PostureRow & { seal: string | null })[];
      for (const row of rows)
        if (!sealMatches(this.#key, "postures", postureSealRow(row.agent_id, row.tier, row.posture, row.updated_at), row.seal))
          throw unsealedRow("postures", `of '${row.agent_id}' for tier ${row.tier}`);
      requireCurrentPostures(agent_id, postureEvents(db, agent_id), rows, logWasCut(db));
      return rows;
    });
  }

  /**
   * Every row of the agent is checked, seal and currency (row-currency.ts),
   * in one read snapshot: an edited, restored or deleted per-tier row must
   * not hand the answer to the all-tier one.
   */
  resolve(agent_id: string, tier: PermissionTier): Posture | undefined {
    const rows = this.#resolve(agent_id);
    return (rows.find((r) => r.tier === tier) ?? rows.find((r) => r.tier === ALL_TIERS))?.posture;
  }

  set(agent_id: string, posture: Posture, tier: PermissionTier | null, now: number): PostureEntry {
    return this.#writer.atomically(() => {
      this.#db
        .prepare(
          "INSERT INTO postures (agent_id, tier, posture, updated_at, seal) VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_id, tier) DO UPDATE SET posture = excluded.posture, updated_at = excluded.updated_at, seal = excluded.seal",
        )
        .run(agent_id, tier ?? ALL_TIERS, posture, now, rowSeal(this.#key, "postures", postureSealRow(agent_id, tier ?? ALL_TIERS, posture, now)));
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
    return this.rows().map(postureEntryOf);
  }

  /** Seals every row that has none (rows the store has found the log vouches for). */
  sealUnsealed(): void {
    const seal = this.#db.prepare("UPDATE postures SET seal = ? WHERE agent_id = ? AND tier = ?");
    for (const row of this.rows())
      if (row.seal === null)
        seal.run(rowSeal(this.#key, "postures", postureSealRow(row.agent_id, row.tier, row.posture, row.updated_at)), row.agent_id, row.tier);
  }

  /** Every row as stored, seal included (what verification checks). */
  rows(): (PostureRow & { seal: string | null })[] {
    return this.#db.prepare("SELECT agent_id, tier, posture, updated_at, seal FROM postures ORDER BY agent_id, tier").all() as (PostureRow & {
      seal: string | null;
    })[];
  }
}
