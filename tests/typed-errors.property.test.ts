/**
 * Only typed errors escape the public entry points that take untrusted
 * input — @car/ir's parsers and JSON helpers, every @car/verify function,
 * the @car/engine `Runtime` methods: whatever arrives (any JavaScript value,
 * values nested past the stack, cycles, `null` where an object belongs),
 * each call either answers or throws a `CarError` with a code from the
 * table; a compiled schema's validator never throws at all. (The WebSocket
 * methods are pinned the same way in apps/cli's server tests.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CarError,
  canonicalJson,
  cloneJson,
  compileSchema,
  ERROR_CODES,
  type JsonObject,
  type JsonValue,
  paramsDigest,
  parseAction,
  parseAgentOutput,
  parseAgentSpec,
  parseProposal,
  parseProposalWithGraph,
  parseStateMutation,
  parseToolSchema,
  parseTraceEvent,
  resolveOutputRefs,
  findOutputRefs,
  outputRefsOf,
} from "@car/ir";
import { readJsonObject } from "@car/ir/internal";
import { Runtime } from "@car/engine";
import { equivalent, equivalentDetailed, optimize, simulate, simulateDetailed, transactionCheck, verify } from "@car/verify";

function nested(depth: number, wrap: (inner: unknown) => unknown): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = wrap(v);
  return v;
}

function cyclic(): unknown {
  const o: Record<string, unknown> = { a: 1 };
  o["self"] = o;
  return o;
}

/** Values a hostile or careless caller hands over, beyond fast-check's own `anything`. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({
    maxDepth: 4,
    withNullPrototype: true,
    withObjectString: true,
    withMap: true,
    withSet: true,
    withBigInt: true,
    withDate: true,
    withTypedArray: true,
    withSparseArray: true,
  }),
  fc.jsonValue({ maxDepth: 4 }),
  fc
    .constantFrom<() => unknown>(
      () => null,
      () => undefined,
      () => nested(100_000, (d) => ({ d })),
      () => nested(100_000, (d) => [d]),
      cyclic,
      () => [cyclic()],
      () => ({ actions: [{ id: "a", type: "state_write", parameters: { key: "k", value: cyclic() } }] }),
      () => ({ actions: [{ id: "a", type: "tool_call", tool: "t", parameters: nested(50_000, (d) => ({ d })) }] }),
      () => ({ actions: null }),
      () => ({ $ref: "#" }),
      () => ({ type: "string", pattern: "(a)\\1" }),
      () => "{".repeat(100_000),
    )
    .map((make) => make()),
);

/** Calls `f`; passes when it answers or throws (or rejects with) a CarError whose code is in the table. */
async function answersOrThrowsCarError(f: () => unknown): Promise<void> {
  try {
    await f();
  } catch (error) {
    if (!(error instanceof CarError))
      throw new Error(`escaped a ${(error as Error)?.constructor?.name}: ${String((error as Error)?.message ?? error).slice(0, 200)}`);
    expect(ERROR_CODES[error.code]).toBeDefined();
  }
}

const proposal = {
  actions: [
    { id: "w", type: "state_write", parameters: { key: "k", value: 1 } },
    { id: "r", type: "state_read", parameters: { key: "k" }, state_dependencies: ["k"] },
  ],
};

const ENTRY_POINTS: Record<string, (input: unknown, other: unknown) => unknown> = {
  parseProposal: (x) => parseProposal(x),
  parseProposalWithGraph: (x) => parseProposalWithGraph(x),
  parseAction: (x) => parseAction(x),
  parseToolSchema: (x) => parseToolSchema(x),
  parseAgentSpec: (x) => parseAgentSpec(x),
  parseAgentOutput: (x) => parseAgentOutput(x),
  parseTraceEvent: (x) => parseTraceEvent(x),
  parseStateMutation: (x) => parseStateMutation(x),
  readJsonObject: (x) => readJsonObject(x, "input"),
  canonicalJson: (x) => canonicalJson(x as JsonValue),
  paramsDigest: (x) => paramsDigest(x as JsonValue),
  cloneJson: (x) => cloneJson(x as JsonValue),
  compileSchema: (x, value) => {
    const validate = compileSchema(x as JsonObject);
    // A validator answers every value; it never throws.
    const result = validate(value);
    expect(typeof result.ok).toBe("boolean");
  },
  resolveOutputRefs: (x, output) => resolveOutputRefs(x as JsonObject, () => ({ found: true, value: output as JsonValue })),
  findOutputRefs: (x) => findOutputRefs(x as JsonObject),
  outputRefsOf: (x) => outputRefsOf(x as JsonObject),

  "verify(proposal)": (x) => verify(x as never),
  "verify(_, options)": (x) => verify(proposal, x as never),
  "verify(_, { state })": (x) => verify(proposal, { state: x as never }),
  "verify(_, { tools })": (x, y) => verify({ actions: [{ id: "t", type: "tool_call", tool: "t", parameters: { p: y } }] }, { tools: x as never }),
  "verify(_, { maxActions })": (x) => verify(proposal, { maxActions: x as never }),
  "simulate(proposal, state)": (x, y) => simulate(x as never, y as never),
  "simulate(_, state)": (x) => simulate(proposal, x as never),
  simulateDetailed: (x) => simulateDetailed(proposal, x as never),
  optimize: (x) => optimize(x as never),
  "equivalent(a, b)": (x, y) => equivalent(x as never, y as never),
  "equivalent(_, _, states)": (x) => equivalent(proposal, proposal, x as never),
  "equivalentDetailed(_, _, [state])": (x) => equivalentDetailed(proposal, proposal, [x as never]),
  "transactionCheck(proposals, store)": (x, y) => transactionCheck(x as never, y as never),

  "Runtime.executeProposal": (x) => new Runtime().executeProposal(x as never),
  "Runtime.verifyProposal": (x, y) => new Runtime().verifyProposal(x as never, y as never),
  "Runtime.registerTool": (x) => new Runtime().registerTool(x as never),
  "Runtime.registerPolicy": (x) => new Runtime().registerPolicy(x as never),
  "Runtime.state.set": (x, y) => new Runtime().state.set(typeof x === "string" ? x : "k", y as never),
};

/** Each run of these compiles or canonicalises a fresh large value: fewer runs keep the file quick. */
const RUNS: Record<string, number> = { canonicalJson: 40, paramsDigest: 40, compileSchema: 60, "Runtime.registerTool": 60 };

describe("public entry points answer bad input with a CarError", () => {
  for (const [name, call] of Object.entries(ENTRY_POINTS)) {
    it(name, async () => {
      await fc.assert(
        fc.asyncProperty(hostileValue, hostileValue, (input, other) => answersOrThrowsCarError(() => call(input, other))),
        { numRuns: RUNS[name] ?? 150 },
      );
    });
  }
});
