/**
 * The input types accept what the specs' examples write, the parsed types
 * carry every default, and the structured-output schema only admits
 * proposals that parse. The `expectTypeOf` and `@ts-expect-error` lines are
 * checked by `tsc` (the package's typecheck, which includes test/).
 */
import fc from "fast-check";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  compileSchema,
  parseProposal,
  proposalInputSchema,
  type Action,
  type ActionInput,
  type ActionProposal,
  type ActionProposalInput,
  type JsonObject,
  type JsonValue,
  type Precondition,
  type PreconditionInput,
  type ProposalInput,
  type ToolSchema,
  type ToolSchemaInput,
} from "../src/index.ts";

/** car-spec.md §Action / proposal shape, verbatim. */
const carSpecMinimal: ActionProposalInput = {
  actions: [
    { id: "a1", type: "tool_call", tool: "read_file", parameters: { path: "/tmp/foo.txt" }, dependencies: [] },
    { id: "a2", type: "tool_call", tool: "summarize", parameters: { text_ref: "$a1.output" }, dependencies: ["a1"] },
  ],
};

/** agent-ir-spec.md §Action, verbatim (comments dropped). */
const irSpecAction: ActionInput = {
  id: "a1",
  type: "tool_call",
  tool: "deploy",
  parameters: { env: "staging" },
  preconditions: [{ key: "tests_passed", operator: "eq", value: true }],
  expected_effects: { deployed: true },
  state_dependencies: ["build_artifact"],
  invocation_mode: "one_shot",
  reversibility: "compensable",
  compensation: { type: "tool", tool: "rollback_deploy", parameters: { env: "staging" } },
  idempotent: true,
  max_retries: 3,
  failure_behavior: "retry",
  timeout_ms: 30000,
  metadata: { rationale: "..." },
};

/** agent-ir-spec.md §ActionProposal, with the action above. */
const irSpecProposal: ActionProposalInput = {
  id: "abc123def456",
  source: "claude-opus-4-7",
  timestamp: "2026-05-02T12:00:00Z",
  actions: [{ ...irSpecAction, state_dependencies: [] }],
  context: { rationale: "User asked for a deploy", session_id: "..." },
};

/** The keys of `T` that may be absent. */
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];

describe("input types", () => {
  it("the specs' examples type-check as input (see the annotations above) and parse", () => {
    expect(parseProposal(carSpecMinimal).actions.map((a) => a.id)).toEqual(["a1", "a2"]);
    expect(parseProposal(irSpecProposal).actions[0]!.compensation).toEqual({ type: "tool", tool: "rollback_deploy", parameters: { env: "staging" } });
  });

  it("only the fields the spec requires are required on input", () => {
    // @ts-expect-error `actions` is required
    const noActions: ActionProposalInput = { source: "m" };
    const minimal: ActionInput = { type: "state_read" };
    const precondition: PreconditionInput = { key: "ready" };
    const tool: ToolSchemaInput = { name: "grep" };
    expect(parseProposal({ actions: [minimal, { type: "assertion", preconditions: [precondition] }] }).actions).toHaveLength(2);
    expect(tool.name).toBe("grep");
    // @ts-expect-error `type` is required
    const noType: ActionInput = { tool: "x" };
    // @ts-expect-error a wrong enum string is caught
    const badMode: ActionInput = { type: "tool_call", tool: "x", failure_behavior: "explode" };
    // @ts-expect-error a wrong field type is caught
    const badRetries: ActionInput = { type: "tool_call", tool: "x", max_retries: "3" };
    expect([noActions, noType, badMode, badRetries]).toHaveLength(4);
  });

  it("unknown fields are allowed where the wire keeps them, and null means absent", () => {
    const withExtras: ActionProposalInput = {
      actions: [{ type: "tool_call", tool: "t", compensation: null, timeout_ms: null, x_trace: "kept", preconditions: [{ key: "k", x_note: 1 }] }],
      x_batch: { any: "thing" },
    };
    const parsed = parseProposal(withExtras) as ActionProposal & { x_batch?: JsonValue };
    expect(parsed.x_batch).toEqual({ any: "thing" });
    expect(parsed.actions[0]!.timeout_ms).toBeUndefined();
  });

  it("a parsed value is accepted as input again", () => {
    expectTypeOf<ActionProposal>().toExtend<ActionProposalInput>();
    expectTypeOf<Action>().toExtend<ActionInput>();
    expectTypeOf<Precondition>().toExtend<PreconditionInput>();
    expectTypeOf<ToolSchema>().toExtend<ToolSchemaInput>();
    expectTypeOf<ActionProposal>().toExtend<ProposalInput>();
    expectTypeOf<string>().toExtend<ProposalInput>();
    const again = parseProposal(parseProposal(carSpecMinimal));
    expect(again.actions[1]!.dependencies).toEqual(["a1"]);
  });

  it("the parsed types have every default present", () => {
    expectTypeOf<OptionalKeys<Action>>().toEqualTypeOf<"tool" | "compensation" | "timeout_ms">();
    expectTypeOf<OptionalKeys<ActionProposal>>().toEqualTypeOf<never>();
    expectTypeOf<OptionalKeys<Precondition>>().toEqualTypeOf<never>();
    expectTypeOf<OptionalKeys<ToolSchema>>().toEqualTypeOf<"returns" | "cache_ttl_secs" | "rate_limit">();
    const action = parseProposal(carSpecMinimal).actions[0]!;
    expect([action.max_retries, action.failure_behavior, action.reversibility, action.invocation_mode, action.idempotent]).toEqual([
      3,
      "abort",
      "irreversible",
      "one_shot",
      false,
    ]);
  });
});

/** Keywords structured-output modes accept; the schema must use nothing else. */
const ALLOWED_KEYWORDS = new Set([
  "$schema",
  "title",
  "description",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "anyOf",
  "$ref",
  "definitions",
  "minimum",
]);

function keywordsOf(schema: JsonValue, out: Set<string>, inProperties = false): Set<string> {
  if (Array.isArray(schema)) for (const s of schema) keywordsOf(s, out);
  else if (schema !== null && typeof schema === "object") {
    for (const [key, value] of Object.entries(schema)) {
      if (!inProperties) out.add(key);
      keywordsOf(value, out, !inProperties && (key === "properties" || key === "definitions"));
    }
  }
  return out;
}

describe("proposalInputSchema", () => {
  const validate = compileSchema(proposalInputSchema);

  it("uses only keywords structured-output modes accept, and only local references", () => {
    expect([...keywordsOf(proposalInputSchema, new Set())].filter((k) => !ALLOWED_KEYWORDS.has(k))).toEqual([]);
    const refs = JSON.stringify(proposalInputSchema).match(/"\$ref":"[^"]*"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.every((r) => r.startsWith('"$ref":"#/definitions/'))).toBe(true);
  });

  it("accepts the specs' examples (less the timestamp a model does not write)", () => {
    const { timestamp: _ignored, ...withoutTimestamp } = irSpecProposal;
    expect(validate(carSpecMinimal as unknown as JsonObject).ok).toBe(true);
    expect(validate(withoutTimestamp as JsonObject).ok).toBe(true);
  });

  it("requires a tool on a tool_call and refuses invented fields", () => {
    expect(validate({ actions: [{ type: "tool_call" }] }).ok).toBe(false);
    expect(validate({ actions: [{ type: "state_read", parameters: { key: "k" } }] }).ok).toBe(true);
    expect(validate({ actions: [{ type: "state_read", tool_name: "x" }] }).ok).toBe(false);
    expect(validate({ actions: [{ type: "tool_call", tool: "t", compensation: { type: "tool" } }] }).ok).toBe(false);
  });

  it("everything it accepts parses (dependency-free actions)", () => {
    const json = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>;
    const map = fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 3 });
    const action = fc.record(
      {
        type: fc.constantFrom("tool_call", "state_write", "state_read", "assertion", "other"),
        tool: fc.string({ maxLength: 8 }),
        parameters: map,
        preconditions: fc.array(
          fc.record({ key: fc.string(), operator: fc.constantFrom("eq", "gt", "exists", "bogus"), value: json }, { requiredKeys: ["key"] }),
          { maxLength: 2 },
        ),
        expected_effects: map,
        max_retries: fc.oneof(fc.nat(10), fc.constant(-1), fc.constant(1.5)),
        failure_behavior: fc.constantFrom("abort", "retry", "skip", "later"),
        reversibility: fc.constantFrom("reversible", "compensable", "irreversible"),
        compensation: fc.oneof(
          fc.record({ type: fc.constant("tool"), tool: fc.string() }),
          fc.record({ type: fc.constant("action_ref"), action_id: fc.string() }),
        ),
        timeout_ms: fc.nat(),
        idempotent: fc.boolean(),
      },
      { requiredKeys: ["type"] },
    );
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 4 }), (actions) => {
        // A tool only where the type takes one, so most generated proposals are schema-valid.
        const shaped = actions.map(({ tool, ...rest }, i) =>
          rest.type === "tool_call" && tool !== undefined ? { ...rest, tool, id: `a${i}` } : { ...rest, id: `a${i}` },
        );
        const proposal = { actions: shaped } as unknown as JsonObject;
        if (!validate(proposal).ok) return;
        accepted++;
        expect(() => parseProposal(proposal)).not.toThrow();
      }),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(10);
  });
});
