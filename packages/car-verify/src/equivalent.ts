/**
 * `equivalent`: do two proposals leave the same state behind? Checked by
 * simulating both from each probe state and comparing the results, so it
 * inherits simulate's gating (a gate that blocks one proposal's write makes
 * them differ). It samples: two proposals that differ only on a key no probe
 * reaches compare equal. That is a spot check, not a proof.
 */
import type { JsonObject, JsonValue } from "@car/ir";
import { CarError, getOwn, hasKey, jsonEquals } from "@car/ir";
import type { VerifyInput } from "./input.ts";
import { toParsed } from "./input.ts";
import { simulator } from "./simulate.ts";
import type { StateInput } from "./state.ts";
import { stateMap, stateRecord } from "./state.ts";

/** The probes used when none are given: exactly `{}` and `{"x": 1, "y": 2}` (agent-ir-spec.md). */
export const DEFAULT_PROBES: readonly StateInput[] = Object.freeze([Object.freeze({}), Object.freeze({ x: 1, y: 2 })]);

export interface EquivalenceDifference {
  /** Position of the first probe on which the post-states differ. */
  probe_index: number;
  probe: JsonObject;
  /** The first key (in the first proposal's state order, then the second's) that differs. */
  key: string;
  /** The first proposal's value; absent when it leaves the key unset. */
  left?: JsonValue;
  /** The second proposal's value; absent when it leaves the key unset. */
  right?: JsonValue;
}

export interface EquivalenceReport {
  equivalent: boolean;
  /** How many probes were compared. */
  probes: number;
  /** Where they first differ; absent when equivalent. */
  difference?: EquivalenceDifference;
}

function firstDifferingKey(left: JsonObject, right: JsonObject): string | undefined {
  for (const key of Object.keys(left)) {
    if (!hasKey(right, key) || !jsonEquals(left[key], right[key])) return key;
  }
  for (const key of Object.keys(right)) if (!hasKey(left, key)) return key;
  return undefined;
}

/** Compares the two proposals' simulated post-states on every probe; reports the first difference. */
export function equivalentDetailed(a: VerifyInput, b: VerifyInput, testStates?: readonly StateInput[]): EquivalenceReport {
  const left = toParsed(a);
  const right = toParsed(b);
  if (testStates !== undefined && !Array.isArray(testStates)) throw new CarError("invalid_params", "invalid test states: must be an array of state objects");
  const probes = testStates ?? DEFAULT_PROBES;
  if (probes.length === 0) return { equivalent: true, probes: 0 };
  // Each proposal's graph is built once, not once per probe.
  const runLeft = simulator(left.proposal, left.graph);
  const runRight = simulator(right.proposal, right.graph);
  for (let i = 0; i < probes.length; i++) {
    const probe = probes[i]!;
    const l = runLeft(probe).state;
    const r = runRight(probe).state;
    const key = firstDifferingKey(l, r);
    if (key === undefined) continue;
    const difference: EquivalenceDifference = { probe_index: i, probe: stateRecord(stateMap(probe)), key };
    const lv = getOwn(l, key);
    const rv = getOwn(r, key);
    if (lv !== undefined) difference.left = lv;
    if (rv !== undefined) difference.right = rv;
    return { equivalent: false, probes: probes.length, difference };
  }
  return { equivalent: true, probes: probes.length };
}

/** `true` when both proposals leave the same state on every probe (default: `{}` and `{"x": 1, "y": 2}`). */
export function equivalent(a: VerifyInput, b: VerifyInput, testStates?: readonly StateInput[]): boolean {
  return equivalentDetailed(a, b, testStates).equivalent;
}
