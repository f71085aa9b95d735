/**
 * One recorded run of a proposal, read back from the audit log: the
 * proposal as admitted (its `proposal_received` event holds it whole), how
 * each action ended, the writes the run committed, and the state the log
 * replays to before and after it. A run is named by its run id, or by its
 * proposal id (the latest run of that id).
 */
import { CarError, getOwn, isJsonObject, type JsonObject, type JsonValue, setOwn } from "@car/ir";
import type { CarEvent } from "@car/engine";
import { replayStateChanges } from "@car/engine/durable";

/** How an action ended in the recorded run. */
export interface RecordedAction {
  action_id: string;
  tool: string | null;
  /** succeeded, failed, rejected, skipped, or not_reached (no terminal event). */
  status: "succeeded" | "failed" | "rejected" | "skipped" | "not_reached";
  /** For a rejection: the stage that refused it (admission, policy, approval, …). */
  stage?: string;
  reason?: string;
}

export interface RecordedRun {
  proposal_id: string;
  run_id: string;
  received_at: string;
  /** committed, rolled_back, interrupted, … — or `unfinished` when the log has no completion. */
  outcome: string;
  proposal: JsonObject;
  actions: RecordedAction[];
  /** What the run committed: key → value, or null for a delete. Empty unless it committed. */
  writes: Record<string, JsonValue | null>;
  /** The state the log replays to just before the run was received, and at its last event. */
  state_before: Record<string, JsonValue>;
  state_after: Record<string, JsonValue>;
}

const TERMINAL = new Set(["action_succeeded", "action_failed", "action_rejected", "action_skipped"]);

/**
 * The run `id` names in `log` (oldest first): a run id, else the latest run
 * of a proposal id (no id: the log's latest run); `not_found` otherwise.
 */
export function recordedRun(log: readonly CarEvent[], id: string | undefined, where = "the audit log"): RecordedRun {
  const received = log.filter((e) => e.kind === "proposal_received");
  const start =
    (id === undefined ? received.at(-1) : (received.find((e) => getOwn(e.data, "run_id") === id) ?? received.filter((e) => e.proposal_id === id).at(-1))) ??
    (() => {
      throw new CarError("not_found", id === undefined ? `no recorded run in ${where}` : `no recorded run or proposal '${id}' in ${where}`);
    })();
  const proposalId = start.proposal_id!;
  const from = log.indexOf(start);
  const next = log.findIndex((e, i) => i > from && e.proposal_id === proposalId && e.kind === "proposal_received");
  const end = next === -1 ? log.length : next;
  const mine = log.slice(from, end).filter((e) => e.proposal_id === proposalId);
  const last = mine.at(-1)!;
  const before = replayStateChanges(log.slice(0, from));
  const after = replayStateChanges(log.slice(0, log.indexOf(last) + 1));
  const proposal = getOwn(start.data, "proposal");
  if (!isJsonObject(proposal)) throw new CarError("storage_error", `the proposal_received event of '${proposalId}' (seq ${start.seq}) holds no proposal`);
  const completion = mine.filter((e) => e.kind === "proposal_completed").at(-1);
  const outcome = mine.some((e) => e.kind === "proposal_interrupted")
    ? "interrupted"
    : completion === undefined
      ? "unfinished"
      : String(getOwn(completion.data, "outcome") ?? "unknown");
  return {
    proposal_id: proposalId,
    run_id: String(getOwn(start.data, "run_id") ?? ""),
    received_at: start.timestamp,
    outcome,
    proposal,
    actions: actionsOf(proposal, mine),
    writes: writesOf(mine),
    state_before: before,
    state_after: after,
  };
}

function actionsOf(proposal: JsonObject, events: readonly CarEvent[]): RecordedAction[] {
  const declared = getOwn(proposal, "actions");
  const actions = Array.isArray(declared) ? declared.filter(isJsonObject) : [];
  return actions.map((action) => {
    const id = String(getOwn(action, "id"));
    const tool = getOwn(action, "tool");
    // The forward run's end: a compensation step's events are about undoing, not about the action.
    const ending = events.filter((e) => e.action_id === id && TERMINAL.has(e.kind) && getOwn(e.data, "compensation") === undefined).at(-1);
    const base = { action_id: id, tool: typeof tool === "string" ? tool : null };
    if (ending === undefined) return { ...base, status: "not_reached" as const };
    const status = ending.kind.slice("action_".length) as RecordedAction["status"];
    const stage = getOwn(ending.data, "stage");
    const reason = getOwn(ending.data, "reason") ?? getOwn(ending.data, "error");
    return {
      ...base,
      status,
      ...(typeof stage === "string" ? { stage } : {}),
      ...(typeof reason === "string" ? { reason } : {}),
    };
  });
}

/** The run's own committed writes, each key's last: its value, or null for a delete. Nothing unless the run committed. */
function writesOf(events: readonly CarEvent[]): Record<string, JsonValue | null> {
  const writes: Record<string, JsonValue | null> = {};
  const committed = events.some((e) => e.kind === "proposal_completed" && getOwn(e.data, "outcome") === "committed");
  if (!committed) return writes;
  for (const e of events) {
    if (e.kind !== "state_changed") continue;
    setOwn(writes, String(getOwn(e.data, "key")), getOwn(e.data, "op") === "delete" ? null : (getOwn(e.data, "value") ?? null));
  }
  return writes;
}
