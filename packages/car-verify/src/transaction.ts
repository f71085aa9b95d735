/**
 * `transactionCheck`: conflicts between the actions of one or several agents'
 * proposals and a versioned snapshot of shared state (agent-ir-spec.md,
 * `read_set` / `write_set` / `assumptions`).
 *
 * - write_write: two unordered actions write one key.
 * - read_write: an action reads a key another unordered action writes.
 * - stale_read: an assumption's `read_version` is older than the store's.
 * - belief_divergence: an assumption's `expected_value` is not the stored value.
 *
 * Inside one proposal "unordered" means no dependency path either way;
 * actions of different proposals are never ordered with each other. A key
 * with more than `ALL_PAIRS_LIMIT` actions on one side gets a linear set of
 * pairs instead of all of them, within a proposal and across proposals alike;
 * past `CROSS_PROPOSAL_PAIR_BUDGET` pairs across proposals (over all keys),
 * every further key gets only a spanning set across proposals, so the report
 * stays linear in the actions however many proposals are checked.
 */
import type { Action, ActionProposal, DependencyGraph, JsonValue } from "@car/ir";
import { dependencyEdges, getOwn, jsonEquals } from "@car/ir";
import { pushReadKeys, pushWrittenKeys } from "@car/ir/internal";
import type { VerifyInput } from "./input.ts";
import { toParsed } from "./input.ts";
import { groupByKey, groupSize, type KeyGroups, KeyTable, membersOf } from "./key-groups.ts";
import { CandidateBatch } from "./candidates.ts";
import {
  CROSS_PROPOSAL_PAIR_BUDGET,
  type PairBudget,
  pairsAcross,
  pairsAmongProposals,
  pairsBetween,
  pairsWithin,
  readWriteCrossCount,
  readWriteSpanning,
} from "./pairs.ts";
import { Reachability } from "./reach.ts";
import { topoPositions } from "./topo-orders.ts";

export type TransactionConflictKind = "write_write" | "read_write" | "stale_read" | "belief_divergence";

export interface TransactionConflict {
  kind: TransactionConflictKind;
  key: string;
  /** The actions involved (for read_write: reader first, then writer). */
  actions: string[];
  /** The proposal id of each entry of `actions`; present only when several proposals were checked. */
  proposal_ids?: string[];
  explanation: string;
  resolution: string;
}

export interface TransactionReport {
  /** `true` when there are no conflicts. */
  consistent: boolean;
  conflicts: TransactionConflict[];
}

/** One key of the versioned store. */
export interface VersionedValue {
  value: JsonValue;
  version: number;
}

export type VersionedStore = Readonly<Record<string, VersionedValue>>;

interface Prepared {
  proposal: ActionProposal;
  graph: DependencyGraph;
  pos: Int32Array;
  reads: KeyGroups;
  writes: KeyGroups;
}

/**
 * Groups every proposal's writers, then readers, by key over one key table,
 * and lists the keys each side names in first-seen order (proposal by
 * proposal, in declaration order).
 */
function prepareAll(list: readonly { proposal: ActionProposal; graph?: DependencyGraph }[]) {
  const table = new KeyTable();
  const graphs = list.map(({ proposal, graph }) => graph ?? dependencyEdges(proposal.actions));
  const side = (push: (action: Action, out: string[]) => void) => {
    const groups = list.map(({ proposal }, p) =>
      groupByKey(proposal.actions.length, (i, out) => push(proposal.actions[i]!, out), graphs[p]!.flat.order, table),
    );
    const listed = new Uint8Array(table.keys.length);
    const keys: number[] = [];
    for (const g of groups) {
      for (const k of g.firstSeen) {
        if (listed[k] === 1) continue;
        listed[k] = 1;
        keys.push(k);
      }
    }
    return { groups, keys };
  };
  const writes = side(pushWrittenKeys);
  const reads = side(pushReadKeys);
  const prepared: Prepared[] = list.map(({ proposal }, p) => ({
    proposal,
    graph: graphs[p]!,
    pos: topoPositions(graphs[p]!),
    reads: reads.groups[p]!,
    writes: writes.groups[p]!,
  }));
  return { table, prepared, writeKeys: writes.keys, readKeys: reads.keys };
}

/**
 * Joins a message's parts into one flat string. A template literal leaves a
 * tree of concatenations behind (a 32-byte node per part on top of the text),
 * and a conflict-heavy plan keeps a million such messages in its report.
 */
function message(parts: string[]): string {
  return parts.join("");
}

const READ_WRITE_RESOLUTION = "add a dependency between them so the read happens strictly before or after the write";

export function transactionCheck(proposals: VerifyInput | readonly VerifyInput[], store: VersionedStore = {}): TransactionReport {
  // Array.from visits holes too (map skips them): a sparse list is refused like any missing proposal.
  const list = Array.isArray(proposals) ? Array.from(proposals as readonly VerifyInput[], (p) => toParsed(p)) : [toParsed(proposals)];
  const { table, prepared, writeKeys, readKeys } = prepareAll(list);
  const several = prepared.length > 1;

  const conflicts: TransactionConflict[] = [];
  const idOf = (p: number, i: number) => prepared[p]!.proposal.actions[i]!.id;
  // What follows an action's id in a message: its closing quote, and its proposal when several are checked.
  // The busy messages join these parts with the id (`message`), so no quoted name is made only to be copied.
  const afterId = prepared.map((x) => (several ? `' (proposal '${x.proposal.id}')` : "'"));
  const name = (p: number, i: number) => `'${idOf(p, i)}${afterId[p]}`;
  /** A finding on action `ai` of proposal `ap`, and on action `bi` of proposal `bp` unless `bp` is -1. */
  const conflict = (kind: TransactionConflictKind, key: string, ap: number, ai: number, bp: number, bi: number, explanation: string, resolution: string) => {
    const actions = bp === -1 ? [idOf(ap, ai)] : [idOf(ap, ai), idOf(bp, bi)];
    if (!several) return { kind, key, actions, explanation, resolution };
    const ids = bp === -1 ? [prepared[ap]!.proposal.id] : [prepared[ap]!.proposal.id, prepared[bp]!.proposal.id];
    return { kind, key, actions, explanation, resolution, proposal_ids: ids };
  };

  // Write-write pairs already reported, per key: the pair's two global action numbers as one number. Only a pair
  // with a reader of the key among its two can come back as a read_write candidate, so only those are kept.
  const offset: number[] = [0];
  for (const x of prepared) offset.push(offset[offset.length - 1]! + x.proposal.actions.length);
  const total = offset[offset.length - 1]!;
  const writeWrite = new Map<number, Set<number>>();
  // readsKey[g] === 1: global action g reads key id `stamped` (a byte per action, cleared key by key: 1 MB at 1M actions, not 4).
  const readsKey = new Uint8Array(total);
  let stamped = -1;
  /** Sets the readers of key id `k` to `mark` in `readsKey` (1 to mark them, 0 to clear them). */
  const markReaders = (k: number, mark: number) => {
    prepared.forEach((r, s) => {
      for (const reader of membersOf(r.reads, k)) readsKey[offset[s]! + reader] = mark;
    });
  };
  // One write_write resolution per key, shared by that key's findings.
  const resolutions: string[] = new Array(table.keys.length);

  /** Reports one unordered pair; every write_write pair of a key comes before its read_write pairs. */
  const found = (readWrite: number, k: number, p: number, i: number, q: number, j: number) => {
    const key = table.keys[k]!;
    const x = offset[p]! + i;
    const y = offset[q]! + j;
    const code = Math.min(x, y) * total + Math.max(x, y);
    if (readWrite === 0) {
      if (stamped !== k) {
        if (stamped !== -1) markReaders(stamped, 0);
        markReaders(k, 1);
        stamped = k;
      }
      if (readsKey[x] === 1 || readsKey[y] === 1) {
        let seen = writeWrite.get(k);
        if (seen === undefined) writeWrite.set(k, (seen = new Set()));
        seen.add(code);
      }
      resolutions[k] ??= `order one after the other (a dependency), or have only one of them write '${key}'`;
      const explanation = message([
        "'",
        idOf(p, i),
        afterId[p]!,
        " and '",
        idOf(q, j),
        afterId[q]!,
        " both write '",
        key,
        "' and neither is ordered before the other",
      ]);
      conflicts.push(conflict("write_write", key, p, i, q, j, explanation, resolutions[k]));
      return;
    }
    // A pair that already races as two writers is reported once, as the stronger write_write.
    if (writeWrite.get(k)?.has(code) === true) return;
    const explanation = message([
      "'",
      idOf(p, i),
      afterId[p]!,
      " reads '",
      key,
      "' while '",
      idOf(q, j),
      afterId[q]!,
      ", not ordered with it, writes it: the value read depends on scheduling",
    ]);
    conflicts.push(conflict("read_write", key, p, i, q, j, explanation, READ_WRITE_RESOLUTION));
  };

  // Pairs are found key by key and judged a batch at a time: same-proposal ones need a reachability answer,
  // cross-proposal ones are conflicts outright.
  const batch = new CandidateBatch(
    prepared.map((x) => new Reachability(x.graph, x.pos)),
    found,
  );

  /** How many actions of all the proposals write key id `k`. */
  const writerCount = (k: number) => {
    let count = 0;
    for (const x of prepared) count += groupSize(x.writes, k);
    return count;
  };
  // Pairs across proposals grow with the square of their number: past this budget, over all keys, only linear sets.
  // One proposal alone keeps every pair its keys allow (`ALL_PAIRS_LIMIT`), as `verify` does.
  const pairBudget: PairBudget = { left: several ? CROSS_PROPOSAL_PAIR_BUDGET : Number.POSITIVE_INFINITY };
  for (const k of writeKeys) {
    // Most keys have one writer (a million at 1M actions): no views and no array made for them.
    if (writerCount(k) < 2) continue;
    const groups = prepared.map((x) => membersOf(x.writes, k));
    groups.forEach((g, p) => pairsWithin(g, (i, j) => batch.add(0, k, p, i, p, j), pairBudget));
    pairsAmongProposals(groups, pairBudget, (p, i, q, j) => batch.add(0, k, p, i, q, j));
  }
  for (const k of readKeys) {
    if (writerCount(k) === 0) continue;
    const wgroups = prepared.map((x) => membersOf(x.writes, k));
    const rgroups = prepared.map((x) => membersOf(x.reads, k));
    const cross = readWriteCrossCount(rgroups, wgroups, pairBudget.left);
    const everyPair = cross <= pairBudget.left;
    pairBudget.left = everyPair ? pairBudget.left - cross : 0;
    prepared.forEach((x, p) => {
      const rg = rgroups[p]!;
      pairsAcross(rg, wgroups[p]!, x.pos, (i, j) => batch.add(1, k, p, i, p, j), pairBudget);
      if (!everyPair) return;
      wgroups.forEach((wg, q) => {
        if (q === p) return;
        pairsBetween(rg, wg, (i, j) => batch.add(1, k, p, i, q, j));
      });
    });
    if (!everyPair) readWriteSpanning(rgroups, wgroups, (p, i, q, j) => batch.add(1, k, p, i, q, j));
  }
  batch.flush();

  prepared.forEach((x, p) => {
    x.proposal.actions.forEach((action, i) => {
      for (const assumption of action.assumptions) {
        const stored = getOwn(store, assumption.key);
        if (assumption.read_version !== undefined && stored !== undefined && assumption.read_version < stored.version) {
          conflicts.push(
            conflict(
              "stale_read",
              assumption.key,
              p,
              i,
              -1,
              -1,
              `${name(p, i)} read '${assumption.key}' at version ${assumption.read_version}, but the store is at version ${stored.version}`,
              `re-read '${assumption.key}' and re-plan against version ${stored.version}`,
            ),
          );
        }
        if (assumption.expected_value !== undefined && (stored === undefined || !jsonEquals(stored.value, assumption.expected_value))) {
          const found = stored === undefined ? "absent" : JSON.stringify(stored.value);
          conflicts.push(
            conflict(
              "belief_divergence",
              assumption.key,
              p,
              i,
              -1,
              -1,
              `${name(p, i)} assumes '${assumption.key}' is ${JSON.stringify(assumption.expected_value)}, but the store holds ${found}`,
              `refresh the belief about '${assumption.key}' from the store before acting on it`,
            ),
          );
        }
      }
    });
  });

  return { consistent: conflicts.length === 0, conflicts };
}
