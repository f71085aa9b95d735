import { describe, expect, it } from "vitest";
import type { CarEvent } from "../events/event.ts";
import { replayBreak, type StoredTables, type TransitionRow } from "./table-replay.ts";

const at = "2026-01-01T00:00:00.000Z";
let seq = 0;
const event = (kind: string, proposal_id: string | null, data: CarEvent["data"], action_id?: string): CarEvent => ({
  seq: ++seq,
  kind,
  proposal_id,
  timestamp: at,
  data,
  ...(action_id === undefined ? {} : { action_id }),
});

/** Runs `p1` (sets `b`), then `p2` (sets `a`), then `p3` (sets `a` again), in log order. */
const log: CarEvent[] = (
  [
    ["p1", "b", 1],
    ["p2", "a", 1],
    ["p3", "a", 2],
  ] as const
).flatMap(([id, key, version]) => [
  event("proposal_received", id, {}),
  event("state_changed", id, { key, op: "set", value: version, version }, "w"),
  event("proposal_completed", id, { outcome: "committed" }),
]);

const row = (proposal_id: string, key: string, version: number): TransitionRow => ({
  key,
  mutation: { op: "set", value: version },
  previous_version: version - 1,
  version,
  proposal_id,
  action_id: "w",
});

const tables = (transitions: TransitionRow[]): StoredTables => ({
  approvals: [],
  postures: [],
  proposals: { per: "proposal", rows: ["p1", "p2", "p3"].map((proposal_id) => ({ proposal_id, status: "committed" })) },
  transitions,
});

describe("the transition record against the log", () => {
  it("is compared key by key: rows of different keys may be stored in another order than the log's", () => {
    expect(replayBreak(log, tables([row("p1", "b", 1), row("p2", "a", 1), row("p3", "a", 2)]))).toBeUndefined();
    expect(replayBreak(log, tables([row("p2", "a", 1), row("p3", "a", 2), row("p1", "b", 1)]))).toBeUndefined();
  });

  it("reports one key's rows out of that key's order, a missing row and a forged one", () => {
    expect(replayBreak(log, tables([row("p1", "b", 1), row("p3", "a", 2), row("p2", "a", 1)]))).toMatchObject({
      table: "transitions",
      reason: expect.stringContaining("transition 1 of key 'a' is not the change the log records"),
    });
    expect(replayBreak(log, tables([row("p1", "b", 1), row("p2", "a", 1)]))).toMatchObject({
      table: "transitions",
      reason: "transition 2 of key 'a' is in the log but its row is gone",
    });
    expect(replayBreak(log, tables([row("p1", "b", 1), row("p2", "a", 1), row("p3", "a", 2), row("p3", "c", 1)]))).toMatchObject({
      table: "transitions",
      reason: expect.stringContaining("transition 1 of key 'c' is not the change the log records: the row was inserted"),
    });
  });

  it("expects no row for a delete of an absent key", () => {
    const deletes = [...log, event("state_changed", null, { key: "gone", op: "delete", version: 1 })];
    expect(replayBreak(deletes, tables([row("p1", "b", 1), row("p2", "a", 1), row("p3", "a", 2)]))).toBeUndefined();
  });
});
