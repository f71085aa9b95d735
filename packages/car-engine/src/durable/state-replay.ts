/**
 * Rebuilds state from an event log: the `state_changed` events of every
 * proposal whose `proposal_completed` says `committed`, applied at that
 * completion, in log order, and direct writes (a `state_changed` that
 * belongs to no proposal: `state.set`, seeding, tenant writes) where they
 * stand. A durable backend's stored state must equal this
 * (the property test checks it) — that is what "the log and the state
 * agree" means. A completion the store refused is void: the engine follows
 * it with `proposal_rolled_back` for the same proposal, and its changes are
 * not applied.
 */
import { emptyMap, jsonEquals, setOwn } from "@car/ir";
import type { JsonValue } from "@car/ir";
import type { CarEvent } from "../events/event.ts";
import { EVENT_KINDS } from "../events/event.ts";

export function replayStateChanges(events: Iterable<CarEvent>, initial: Readonly<Record<string, JsonValue>> = {}): Record<string, JsonValue> {
  const state = emptyMap();
  for (const key of Object.keys(initial)) setOwn(state, key, initial[key]!);
  for (const change of appliedStateChanges(events)) {
    const key = change.data["key"] as string;
    if (change.data["op"] === "delete") delete state[key];
    else setOwn(state, key, change.data["value"] as JsonValue);
  }
  return state;
}

/**
 * The `state_changed` events that took effect, in the order they were
 * applied: each committed run's at its (non-void) completion, direct writes
 * where they stand. What the state is (above) and what the store's
 * transition record must list (table-replay.ts) both follow from it.
 */
export function appliedStateChanges(events: Iterable<CarEvent>): CarEvent[] {
  const log = [...events];
  // Pass 1: committed completions later voided by a rollback of the same run.
  const voided = new Set<CarEvent>();
  const lastCommitted = new Map<string, CarEvent>();
  for (const event of log) {
    if (event.proposal_id === null) continue;
    if (event.kind === EVENT_KINDS.proposalReceived) lastCommitted.delete(event.proposal_id);
    else if (event.kind === EVENT_KINDS.proposalCompleted && event.data["outcome"] === "committed") lastCommitted.set(event.proposal_id, event);
    else if (event.kind === EVENT_KINDS.proposalRolledBack) {
      const completion = lastCommitted.get(event.proposal_id);
      if (completion !== undefined) voided.add(completion);
      lastCommitted.delete(event.proposal_id);
    }
  }
  // Pass 2: each run's changes at its (non-void) committed completion.
  const pending = new Map<string, CarEvent[]>();
  const applied: CarEvent[] = [];
  for (const event of log) {
    if (event.proposal_id === null) {
      if (event.kind === EVENT_KINDS.stateChanged) applied.push(event);
      continue;
    }
    if (event.kind === EVENT_KINDS.proposalReceived) pending.delete(event.proposal_id);
    else if (event.kind === EVENT_KINDS.stateChanged) {
      const list = pending.get(event.proposal_id) ?? [];
      list.push(event);
      pending.set(event.proposal_id, list);
    } else if (event.kind === EVENT_KINDS.proposalCompleted) {
      const changes = pending.get(event.proposal_id) ?? [];
      pending.delete(event.proposal_id);
      if (event.data["outcome"] !== "committed" || voided.has(event)) continue;
      applied.push(...changes);
    }
  }
  return applied;
}

/**
 * The first key (in code-unit order) whose stored value differs from the
 * replayed one, with a description; undefined when they agree.
 */
export function firstStateDifference(
  replayed: Readonly<Record<string, JsonValue>>,
  stored: Readonly<Record<string, JsonValue>>,
): { key: string; reason: string } | undefined {
  const keys = [...new Set([...Object.keys(replayed), ...Object.keys(stored)])].sort();
  const show = (value: JsonValue | undefined): string => (value === undefined ? "absent" : truncate(JSON.stringify(value)));
  for (const key of keys) {
    const want = Object.hasOwn(replayed, key) ? replayed[key] : undefined;
    const have = Object.hasOwn(stored, key) ? stored[key] : undefined;
    if (want === undefined && have === undefined) continue;
    if (want !== undefined && have !== undefined && jsonEquals(want, have)) continue;
    return { key, reason: `the stored state differs from the state the log replays to at key '${key}': stored ${show(have)}, the log says ${show(want)}` };
  }
  return undefined;
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
