/**
 * The storage bundle a `Runtime` runs on: state, event log and the
 * transaction hooks that make a proposal's effects durable. The engine works
 * synchronously against `state` (through a `WorkingState` overlay) and calls
 * the hooks at proposal boundaries:
 *
 * - `beginProposal` before the first action runs. A durable backend records
 *   the proposal as executing (so a crash leaves it visible as interrupted)
 *   and may refresh its synchronous state cache. It refuses a proposal id
 *   that is still executing (here or in another live process) with
 *   `duplicate_proposal` (DECISIONS §20): the run is refused, not begun.
 * - `commitProposal` once, at the end, with the proposal's writes, the reads
 *   and assumptions it depended on, and every event appended for it. A
 *   backend applies the writes to `state` and persists writes and events in
 *   one transaction. It may refuse with `CarError` `stale_read` /
 *   `write_conflict` (naming the keys in `details.keys`) when a key it read
 *   moved; the engine then rolls the proposal back and commits again with
 *   outcome `rolled_back` and no writes, so the audit trail is kept. The
 *   events passed to a refused commit that described the refused outcome
 *   (its `state_changed` and `proposal_completed`) are void: the retry's
 *   `events` lists every event of the proposal, the void ones included, and
 *   a backend that buffers appends persists the list it is given.
 * - `recover` on start-up: mark proposals that were executing when the last
 *   process died as interrupted (their writes were never committed).
 */
import { systemClock } from "@car/ir";
import { InMemoryApprovalLedger } from "@car/policy";
import type { ApprovalLedger } from "@car/policy";
import type { Clock, JsonValue } from "@car/ir";
import type { CarEvent } from "../events/event.ts";
import type { EventLog } from "../events/event-log.ts";
import { InMemoryEventLog } from "../events/in-memory-event-log.ts";
import { InMemoryStateStore } from "./in-memory-state-store.ts";
import type { StateStore, StateTransition } from "./state-store.ts";
import type { PendingMutation, ReadRecord } from "./working-state.ts";

/** An assumption an executed action declared (`assumptions[]`), for the backend to check at commit. */
export interface AssumptionRecord {
  action_id: string;
  key: string;
  expected_value?: JsonValue;
  read_version?: number;
}

export interface ProposalBegin {
  proposal_id: string;
  /**
   * The run's own id (DECISIONS §20), which every event of the run carries
   * in `data.run_id`: what a durable backend finds the run's dispatch
   * intents by on recovery (a proposal id can be run again, and clocks skew).
   */
  run_id: string;
  /** RFC 3339. */
  timestamp: string;
}

export interface ProposalCommit {
  proposal_id: string;
  /** The run's id (`ProposalBegin.run_id`): an event the backend adds for the run (a transaction warning) carries it too. */
  run_id: string;
  /**
   * `committed`: apply `mutations`. `rolled_back` (the proposal aborted, or
   * an earlier commit of it was refused) and `rejected` (refused at
   * admission, nothing ran): `mutations` is empty; persist only the events.
   */
  outcome: "committed" | "rolled_back" | "rejected";
  mutations: readonly PendingMutation[];
  /** Keys read from shared state (each executed action's effective read set and its state reads), with the versions seen. */
  reads: readonly ReadRecord[];
  assumptions: readonly AssumptionRecord[];
  /** Every event appended for this proposal, in order. */
  events: readonly CarEvent[];
}

/** A proposal a backend found executing at start-up and marked interrupted. */
export interface InterruptedProposal {
  proposal_id: string;
  /** The interrupted run's id; absent for a run begun by a build that did not record it. */
  run_id?: string;
  /** RFC 3339: when it began. */
  timestamp: string;
  /** Actions whose tool was called (a `dispatch_intent` is on record): their external effects may have happened. */
  dispatched?: string[];
}

export interface RuntimeStore {
  readonly state: StateStore;
  readonly events: EventLog;
  /** Where approval decisions are recorded (an `ApprovalGate` built for this runtime should use it). */
  readonly approvals: ApprovalLedger;
  beginProposal?(begin: ProposalBegin): void | Promise<void>;
  /** Applies and persists a proposal's outcome; returns the state transitions it made. */
  commitProposal(commit: ProposalCommit): StateTransition[] | Promise<StateTransition[]>;
  recover?(): InterruptedProposal[] | Promise<InterruptedProposal[]>;
  close?(): void | Promise<void>;
}

/** Applies a commit's mutations to a synchronous state store, attributing each to its action. */
export function applyMutations(state: StateStore, proposal_id: string, mutations: readonly PendingMutation[]): StateTransition[] {
  const out: StateTransition[] = [];
  for (const m of mutations) {
    const by = { proposal_id, action_id: m.action_id };
    if (m.mutation.op === "set") out.push(state.set(m.key, m.mutation.value, by));
    else {
      const t = state.delete(m.key, by);
      if (t !== null) out.push(t);
    }
  }
  return out;
}

export interface InMemoryStoreOptions {
  clock?: Clock;
  initialState?: Readonly<Record<string, JsonValue>>;
}

/** The default bundle: nothing persists, commits apply directly and never conflict. */
export function inMemoryStore(options: InMemoryStoreOptions = {}): RuntimeStore {
  const stateOptions =
    options.initialState === undefined ? { clock: options.clock ?? systemClock } : { clock: options.clock ?? systemClock, initial: options.initialState };
  const state = new InMemoryStateStore(stateOptions);
  return {
    state,
    events: new InMemoryEventLog(),
    approvals: new InMemoryApprovalLedger(),
    commitProposal(commit) {
      if (commit.outcome !== "committed") return [];
      return applyMutations(state, commit.proposal_id, commit.mutations);
    },
  };
}
