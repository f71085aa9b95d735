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
 * pairs instead of all of them, within a proposal and across proposals alike.
 */
import type { Action, ActionProposal, DependencyGraph, JsonValue } from "@car/ir";
import { dependencyEdges, getOwn, jsonEquals, pushReadKeys, pushWrittenKeys } from "@car/ir";
import type { ProposalInput } from "./input.ts";
import { toParsed } from "./input.ts";
import { groupByKey, type KeyGroups, KeyTable, membersOf } from "./key-groups.ts";
import type { PairList } from "./pairs.ts";
import { emptyPairs, pairsAcross, pairsBetween, pairsWithin, unorderedPairs } from "./pairs.ts";
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

/** An action across proposals: proposal position and action index. */
interface Ref {
  p: number;
  i: number;
}

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
 * Candidate pairs as parallel arrays (no object per pair): pair `c` is
 * `(ap[c], ai[c])` against `(bp[c], bi[c])` on key id `key[c]`.
 */
interface Candidates {
  readWrite: number[]; // 1 for read_write, 0 for write_write
  key: number[];
  ap: number[];
  ai: number[];
  bp: number[];
  bi: number[];
}

export function transactionCheck(proposals: ProposalInput | readonly ProposalInput[], store: VersionedStore = {}): TransactionReport {
  // Array.from visits holes too (map skips them): a sparse list is refused like any missing proposal.
  const list = Array.isArray(proposals) ? Array.from(proposals as readonly ProposalInput[], (p) => toParsed(p)) : [toParsed(proposals)];
  const { table, prepared, writeKeys, readKeys } = prepareAll(list);
  const several = prepared.length > 1;

  // Same-proposal candidates need a reachability answer; cross-proposal ones are conflicts outright.
  const cand: Candidates = { readWrite: [], key: [], ap: [], ai: [], bp: [], bi: [] };
  const within: { pairs: PairList; slots: number[] }[] = prepared.map(() => ({ pairs: emptyPairs(), slots: [] }));
  // Called once per same-proposal pair, in the pair list's order, so `slots[k]` answers pair `k`.
  const add = (readWrite: number, key: number, ap: number, ai: number, bp: number, bi: number) => {
    cand.readWrite.push(readWrite);
    cand.key.push(key);
    cand.ap.push(ap);
    cand.ai.push(ai);
    cand.bp.push(bp);
    cand.bi.push(bi);
    if (ap === bp) within[ap]!.slots.push(cand.key.length - 1);
  };

  for (const k of writeKeys) {
    const groups = prepared.map((x) => membersOf(x.writes, k));
    groups.forEach((g, p) => {
      const w = within[p]!;
      const before = w.pairs.a.length;
      pairsWithin(g, w.pairs);
      for (let c = before; c < w.pairs.a.length; c++) add(0, k, p, w.pairs.a[c]!, p, w.pairs.b[c]!);
    });
    for (let p = 0; p < groups.length; p++) {
      for (let q = p + 1; q < groups.length; q++) pairsBetween(groups[p]!, groups[q]!, (i, j) => add(0, k, p, i, q, j));
    }
  }
  for (const k of readKeys) {
    const wgroups = prepared.map((x) => membersOf(x.writes, k));
    if (wgroups.every((g) => g.length === 0)) continue;
    prepared.forEach((x, p) => {
      const rg = membersOf(x.reads, k);
      const w = within[p]!;
      const before = w.pairs.a.length;
      pairsAcross(rg, wgroups[p]!, x.pos, w.pairs);
      for (let c = before; c < w.pairs.a.length; c++) add(1, k, p, w.pairs.a[c]!, p, w.pairs.b[c]!);
      wgroups.forEach((wg, q) => {
        if (q === p) return;
        pairsBetween(rg, wg, (i, j) => add(1, k, p, i, q, j));
      });
    });
  }

  const ordered = new Uint8Array(cand.key.length);
  within.forEach((w, p) => {
    const unordered = unorderedPairs(prepared[p]!.graph, prepared[p]!.pos, w.pairs);
    w.slots.forEach((slot, c) => {
      if (unordered[c] === 0) ordered[slot] = 1;
    });
  });

  const conflicts: TransactionConflict[] = [];
  const idOf = (r: Ref) => prepared[r.p]!.proposal.actions[r.i]!.id;
  const withRefs = (c: Omit<TransactionConflict, "proposal_ids">, refs: Ref[]): TransactionConflict =>
    several ? { ...c, proposal_ids: refs.map((r) => prepared[r.p]!.proposal.id) } : c;
  const name = (r: Ref) => (several ? `'${idOf(r)}' (proposal '${prepared[r.p]!.proposal.id}')` : `'${idOf(r)}'`);
  // Write-write pairs already reported, per key: the pair's two global action numbers as one number.
  const offset: number[] = [0];
  for (const x of prepared) offset.push(offset[offset.length - 1]! + x.proposal.actions.length);
  const total = offset[offset.length - 1]!;
  const writeWrite = new Map<number, Set<number>>();
  const pairCode = (c: number) => {
    const x = offset[cand.ap[c]!]! + cand.ai[c]!;
    const y = offset[cand.bp[c]!]! + cand.bi[c]!;
    return Math.min(x, y) * total + Math.max(x, y);
  };

  for (let c = 0; c < cand.key.length; c++) {
    if (ordered[c] === 1) continue;
    const key = table.keys[cand.key[c]!]!;
    const a = { p: cand.ap[c]!, i: cand.ai[c]! };
    const b = { p: cand.bp[c]!, i: cand.bi[c]! };
    if (cand.readWrite[c] === 0) {
      let seen = writeWrite.get(cand.key[c]!);
      if (seen === undefined) writeWrite.set(cand.key[c]!, (seen = new Set()));
      seen.add(pairCode(c));
      conflicts.push(
        withRefs(
          {
            kind: "write_write",
            key,
            actions: [idOf(a), idOf(b)],
            explanation: `${name(a)} and ${name(b)} both write '${key}' and neither is ordered before the other`,
            resolution: `order one after the other (a dependency), or have only one of them write '${key}'`,
          },
          [a, b],
        ),
      );
      continue;
    }
    // A pair that already races as two writers is reported once, as the stronger write_write.
    if (writeWrite.get(cand.key[c]!)?.has(pairCode(c)) === true) continue;
    conflicts.push(
      withRefs(
        {
          kind: "read_write",
          key,
          actions: [idOf(a), idOf(b)],
          explanation: `${name(a)} reads '${key}' while ${name(b)}, not ordered with it, writes it: the value read depends on scheduling`,
          resolution: `add a dependency between them so the read happens strictly before or after the write`,
        },
        [a, b],
      ),
    );
  }

  prepared.forEach((x, p) => {
    x.proposal.actions.forEach((action, i) => {
      for (const assumption of action.assumptions) {
        const stored = getOwn(store, assumption.key);
        const ref = { p, i };
        if (assumption.read_version !== undefined && stored !== undefined && assumption.read_version < stored.version) {
          conflicts.push(
            withRefs(
              {
                kind: "stale_read",
                key: assumption.key,
                actions: [action.id],
                explanation: `${name(ref)} read '${assumption.key}' at version ${assumption.read_version}, but the store is at version ${stored.version}`,
                resolution: `re-read '${assumption.key}' and re-plan against version ${stored.version}`,
              },
              [ref],
            ),
          );
        }
        if (assumption.expected_value !== undefined && (stored === undefined || !jsonEquals(stored.value, assumption.expected_value))) {
          const found = stored === undefined ? "absent" : JSON.stringify(stored.value);
          conflicts.push(
            withRefs(
              {
                kind: "belief_divergence",
                key: assumption.key,
                actions: [action.id],
                explanation: `${name(ref)} assumes '${assumption.key}' is ${JSON.stringify(assumption.expected_value)}, but the store holds ${found}`,
                resolution: `refresh the belief about '${assumption.key}' from the store before acting on it`,
              },
              [ref],
            ),
          );
        }
      }
    });
  });

  return { consistent: conflicts.length === 0, conflicts };
}
