/**
 * Issue 36 §5: every public function of @car/verify and @car/ir answers a
 * JSON copy of a parsed proposal that someone edited — a `null` or a value
 * of the wrong type in any field or array, a field removed — with a
 * `CarError`, never a `TypeError` from halfway through a check.
 */
import {
  buildDag,
  CarError,
  dependencyEdges,
  type JsonValue,
  parseAction,
  parseProposal,
  parseProposalWithGraph,
  rollbackContract,
  serializeAction,
  serializeProposal,
  stringifyProposal,
} from "@car/ir";
import { compensationActionIndices } from "@car/ir/internal";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { equivalent, equivalentDetailed, optimize, simulate, simulateDetailed, staticGate, transactionCheck, verify } from "../src/index.ts";

/** A proposal using every field the checks read: preconditions, assumptions, both compensations, every set. */
const BASE = parseProposal({
  id: "p",
  actions: [
    { id: "w", type: "state_write", parameters: { key: "k", value: 1 }, reversibility: "reversible" },
    {
      id: "a",
      type: "tool_call",
      tool: "deploy",
      parameters: { env: "prod", n: [1, 2] },
      preconditions: [{ key: "k", operator: "eq", value: 1 }],
      expected_effects: { deployed: true },
      dependencies: ["w"],
      state_dependencies: ["k"],
      read_set: ["k"],
      write_set: ["deployed"],
      assumptions: [{ key: "k", expected_value: 1, read_version: 0 }],
      reversibility: "compensable",
      compensation: { type: "tool", tool: "rollback", parameters: { env: "prod" } },
      timeout_ms: 1000,
      metadata: { why: "ship" },
    },
    { id: "b", type: "tool_call", tool: "notify", reversibility: "compensable", compensation: { type: "action_ref", action_id: "undo" } },
    { id: "undo", type: "tool_call", tool: "unnotify" },
    { id: "r", type: "state_read", parameters: { key: "deployed" }, dependencies: ["a"] },
    { id: "c", type: "assertion", preconditions: [{ key: "deployed", operator: "exists", value: null }] },
  ],
});
const TEMPLATE = JSON.parse(JSON.stringify(BASE)) as JsonValue;

/** Every path into the template: each field and each array element, at any depth. */
function paths(value: JsonValue, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== "object" || value === null) return [];
  const out: (string | number)[][] = [];
  const entries: [string | number, JsonValue][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of entries) {
    out.push([...prefix, k]);
    for (const p of paths(v, [...prefix, k])) out.push(p);
  }
  return out;
}
const PATHS = paths(TEMPLATE);

const WRONG = fc.constantFrom<JsonValue | undefined>(null, undefined, 0, -1, 1.5, "", "x", true, [], {}, [null], [1], { key: null }, { type: "tool" });

/** A JSON copy of the parsed proposal with one to three fields or elements replaced (or removed, for `undefined`). */
const mutated = fc.array(fc.tuple(fc.constantFrom(...PATHS), WRONG), { minLength: 1, maxLength: 3 }).map((edits) => {
  const copy = JSON.parse(JSON.stringify(TEMPLATE)) as Record<string, unknown>;
  for (const [path, value] of edits) {
    let at: unknown = copy;
    for (const k of path.slice(0, -1)) at = typeof at === "object" && at !== null ? (at as Record<string | number, unknown>)[k] : undefined;
    if (typeof at !== "object" || at === null) continue;
    const last = path[path.length - 1] as string | number;
    if (value === undefined && !Array.isArray(at)) delete (at as Record<string | number, unknown>)[last];
    // A fresh copy of the replacement, so a later edit inside it never reaches the shared constant (or makes a cycle).
    else (at as Record<string | number, unknown>)[last] = value === undefined ? null : structuredClone(value);
  }
  return copy;
});

const actionsOf = (p: Record<string, unknown>) => p["actions"] as never;
const firstAction = (p: Record<string, unknown>) => (Array.isArray(p["actions"]) ? p["actions"][0] : p["actions"]) as never;

const PUBLIC: Record<string, (p: Record<string, unknown>) => unknown> = {
  verify: (p) => verify(p),
  "verify with trace rules": (p) => verify(p, { traceRules: [{ kind: "only_after", tool: "deploy", after: "notify", scope: "proposal" }] }),
  simulate: (p) => simulate(p),
  simulateDetailed: (p) => simulateDetailed(p, { k: 1 }),
  equivalent: (p) => equivalent(p, BASE),
  equivalentDetailed: (p) => equivalentDetailed(BASE, p),
  optimize: (p) => optimize(p),
  transactionCheck: (p) => transactionCheck([p, BASE]),
  "transactionCheck (one)": (p) => transactionCheck(p),
  staticGate: (p) => staticGate(actionsOf(p), undefined),
  parseProposal: (p) => parseProposal(p),
  parseProposalWithGraph: (p) => parseProposalWithGraph(p),
  parseAction: (p) => parseAction(firstAction(p)),
  serializeProposal: (p) => serializeProposal(p as never),
  stringifyProposal: (p) => stringifyProposal(p as never),
  serializeAction: (p) => serializeAction(firstAction(p)),
  dependencyEdges: (p) => dependencyEdges(actionsOf(p)),
  buildDag: (p) => buildDag(actionsOf(p)),
  compensationActionIndices: (p) => compensationActionIndices(actionsOf(p)),
  rollbackContract: (p) => rollbackContract(p as never),
};

describe("public functions answer an edited JSON copy of a parsed proposal with a CarError", () => {
  it("the issue's case: preconditions [null]", () => {
    const copy = JSON.parse(JSON.stringify(BASE));
    copy.actions[1].preconditions = [null];
    for (const f of [verify, simulate, optimize, (p: unknown) => equivalent(p, BASE)]) {
      expect(() => f(copy)).toThrow(CarError);
    }
    // An unedited copy is used as it is.
    expect(verify(JSON.parse(JSON.stringify(BASE))).valid).toBe(verify(BASE).valid);
  });

  it("verify's traceRules option: anything but well-formed rules is invalid_params", () => {
    for (const rules of [
      null,
      "x",
      [null],
      [{ kind: "only_after" }],
      [{ kind: "only_after", tool: "deploy", scope: "proposal" }],
      [{ kind: "max_calls", tool: "x", max_calls: "2", scope: "proposal" }],
      [{ kind: "nope", tool: "x", scope: "proposal" }],
    ]) {
      expect(() => verify(BASE, { traceRules: rules as never }), JSON.stringify(rules)).toThrow(expect.objectContaining({ code: "invalid_params" }));
    }
  });

  for (const [name, call] of Object.entries(PUBLIC)) {
    it(`${name}: returns or throws CarError, nothing else`, () => {
      fc.assert(
        fc.property(mutated, (p) => {
          try {
            call(p);
          } catch (error) {
            if (!(error instanceof CarError)) throw new Error(`${name} threw ${String(error)} on ${JSON.stringify(p)}`);
          }
        }),
        { numRuns: 150 },
      );
    });
  }
});
