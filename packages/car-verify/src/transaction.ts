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
import type { ActionProposal, DependencyGraph, JsonValue } from "@car/ir";
import { dependencyEdges, effectiveReadSet, effectiveWriteSet, getOwn, jsonEquals } from "@car/ir";
import type { ProposalInput } from "./input.ts";
import { toParsed } from "./input.ts";
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
  reads: string[][];
  writes: string[][];
}

function prepare({ proposal, graph = dependencyEdges(proposal.actions) }: { proposal: ActionProposal; graph?: DependencyGraph }): Prepared {
  return {
    proposal,
    graph,
    pos: topoPositions(graph),
    reads: proposal.actions.map(effectiveReadSet),
    writes: proposal.actions.map(effectiveWriteSet),
  };
}

/** Refs per key, grouped by proposal, each group in topological order. */
function refsByKey(prepared: readonly Prepared[], setsOf: (x: Prepared) => string[][]): Map<string, number[][]> {
  const byKey = new Map<string, number[][]>();
  prepared.forEach((x, p) => {
    setsOf(x).forEach((keys, i) => {
      for (const key of keys) {
        let groups = byKey.get(key);
        if (groups === undefined) byKey.set(key, (groups = prepared.map(() => [])));
        groups[p]!.push(i);
      }
    });
  });
  for (const groups of byKey.values()) groups.forEach((g, p) => g.sort((a, b) => prepared[p]!.pos[a]! - prepared[p]!.pos[b]!));
  return byKey;
}

interface Candidate {
  kind: "write_write" | "read_write";
  key: string;
  a: Ref;
  b: Ref;
}

export function transactionCheck(proposals: ProposalInput | readonly ProposalInput[], store: VersionedStore = {}): TransactionReport {
  const list = Array.isArray(proposals) ? proposals.map(toParsed) : [toParsed(proposals)];
  const prepared = list.map(prepare);
  const several = prepared.length > 1;
  const writers = refsByKey(prepared, (x) => x.writes);
  const readers = refsByKey(prepared, (x) => x.reads);

  // Same-proposal candidates need a reachability answer; cross-proposal ones are conflicts outright.
  const candidates: Candidate[] = [];
  const within: { pairs: PairList; slots: number[] }[] = prepared.map(() => ({ pairs: emptyPairs(), slots: [] }));
  // Called once per same-proposal pair, in the pair list's order, so `slots[k]` answers pair `k`.
  const add = (kind: Candidate["kind"], key: string, a: Ref, b: Ref) => {
    candidates.push({ kind, key, a, b });
    if (a.p === b.p) within[a.p]!.slots.push(candidates.length - 1);
  };

  for (const [key, groups] of writers) {
    groups.forEach((g, p) => {
      const w = within[p]!;
      const before = w.pairs.a.length;
      pairsWithin(g, w.pairs);
      for (let k = before; k < w.pairs.a.length; k++) add("write_write", key, { p, i: w.pairs.a[k]! }, { p, i: w.pairs.b[k]! });
    });
    for (let p = 0; p < groups.length; p++) {
      for (let q = p + 1; q < groups.length; q++) {
        pairsBetween(groups[p]!, groups[q]!, (i, j) => add("write_write", key, { p, i }, { p: q, i: j }));
      }
    }
  }
  for (const [key, rgroups] of readers) {
    const wgroups = writers.get(key);
    if (wgroups === undefined) continue;
    rgroups.forEach((rg, p) => {
      const w = within[p]!;
      const before = w.pairs.a.length;
      pairsAcross(rg, wgroups[p]!, prepared[p]!.pos, w.pairs);
      for (let k = before; k < w.pairs.a.length; k++) add("read_write", key, { p, i: w.pairs.a[k]! }, { p, i: w.pairs.b[k]! });
      wgroups.forEach((wg, q) => {
        if (q === p) return;
        pairsBetween(rg, wg, (i, j) => add("read_write", key, { p, i }, { p: q, i: j }));
      });
    });
  }

  const ordered = new Uint8Array(candidates.length);
  within.forEach((w, p) => {
    const unordered = unorderedPairs(prepared[p]!.graph, prepared[p]!.pos, w.pairs);
    w.slots.forEach((slot, k) => {
      if (unordered[k] === 0) ordered[slot] = 1;
    });
  });

  const conflicts: TransactionConflict[] = [];
  const idOf = (r: Ref) => prepared[r.p]!.proposal.actions[r.i]!.id;
  const withRefs = (c: Omit<TransactionConflict, "proposal_ids">, refs: Ref[]): TransactionConflict =>
    several ? { ...c, proposal_ids: refs.map((r) => prepared[r.p]!.proposal.id) } : c;
  const name = (r: Ref) => (several ? `'${idOf(r)}' (proposal '${prepared[r.p]!.proposal.id}')` : `'${idOf(r)}'`);
  const writeWrite = new Set<string>();
  const pairKey = (key: string, x: Ref, y: Ref) => {
    const [s, t] = [`${x.p}:${x.i}`, `${y.p}:${y.i}`].sort();
    return `${key}\u0000${s}\u0000${t}`;
  };

  candidates.forEach((c, k) => {
    if (ordered[k] === 1) return;
    if (c.kind === "write_write") {
      writeWrite.add(pairKey(c.key, c.a, c.b));
      conflicts.push(
        withRefs(
          {
            kind: "write_write",
            key: c.key,
            actions: [idOf(c.a), idOf(c.b)],
            explanation: `${name(c.a)} and ${name(c.b)} both write '${c.key}' and neither is ordered before the other`,
            resolution: `order one after the other (a dependency), or have only one of them write '${c.key}'`,
          },
          [c.a, c.b],
        ),
      );
      return;
    }
    // A pair that already races as two writers is reported once, as the stronger write_write.
    if (writeWrite.has(pairKey(c.key, c.a, c.b))) return;
    conflicts.push(
      withRefs(
        {
          kind: "read_write",
          key: c.key,
          actions: [idOf(c.a), idOf(c.b)],
          explanation: `${name(c.a)} reads '${c.key}' while ${name(c.b)}, not ordered with it, writes it: the value read depends on scheduling`,
          resolution: `add a dependency between them so the read happens strictly before or after the write`,
        },
        [c.a, c.b],
      ),
    );
  });

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
