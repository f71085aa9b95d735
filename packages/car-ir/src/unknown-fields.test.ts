import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ACTION_FIELDS } from "./fields.ts";
import { CarError, didYouMean, parseProposal, parseProposalWithGraph, serializeProposal, unknownFields } from "./index.ts";

/** One edit of `word`: a deletion, an insertion, a substitution or a swap of neighbours. */
const typoOf = (word: string) =>
  fc
    .tuple(fc.constantFrom("delete", "insert", "substitute", "swap"), fc.nat({ max: word.length - 1 }), fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz_"))
    .map(([edit, at, ch]) => {
      if (edit === "delete") return word.slice(0, at) + word.slice(at + 1);
      if (edit === "insert") return word.slice(0, at) + ch + word.slice(at);
      if (edit === "substitute") return word.slice(0, at) + ch + word.slice(at + 1);
      return at + 1 < word.length ? word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2) : word.slice(0, at);
    });

const knownTypo = fc
  .constantFrom(...ACTION_FIELDS)
  .chain((field) => typoOf(field).map((typo) => ({ field, typo })))
  .filter(({ typo }) => typo !== "" && !(ACTION_FIELDS as readonly string[]).includes(typo));

const proposalWith = (extra: Record<string, unknown>) => ({
  id: "p",
  actions: [
    { id: "a1", type: "tool_call", tool: "t" },
    { id: "a2", type: "tool_call", tool: "t", ...extra },
  ],
});

describe("unknown fields (DECISIONS §25)", () => {
  it("names the field a newcomer meant for the misspellings seen in practice", () => {
    const proposal = proposalWith({ dependecies: ["a1"], parameter: { x: 1 }, failure_behaviour: "skip", max_retry: 2 });
    expect(unknownFields(proposal).map((f) => [f.pointer, f.suggestion, f.action_id])).toEqual([
      ["/actions/1/dependecies", "dependencies", "a2"],
      ["/actions/1/parameter", "parameters", "a2"],
      ["/actions/1/failure_behaviour", "failure_behavior", "a2"],
      ["/actions/1/max_retry", "max_retries", "a2"],
    ]);
    expect(unknownFields(proposal)[0]!.message).toBe("unknown field 'dependecies' — did you mean 'dependencies'?");
  });

  it("looks into the proposal, preconditions, assumptions and compensations, and offers nothing for a name close to none", () => {
    const proposal = {
      actons: [],
      actions: [
        {
          id: "a",
          type: "tool_call",
          tool: "t",
          preconditions: [{ key: "k", operater: "eq", value: 1 }],
          assumptions: [{ key: "k", expected: 1 }],
          compensation: { type: "tool", tool: "undo", paramters: {} },
          x_trace_id: "abc",
        },
      ],
    };
    expect(unknownFields(proposal).map((f) => [f.pointer, f.suggestion])).toEqual([
      ["/actons", "actions"],
      ["/actions/0/x_trace_id", undefined],
      ["/actions/0/preconditions/0/operater", "operator"],
      ["/actions/0/assumptions/0/expected", undefined],
      ["/actions/0/compensation/paramters", "parameters"],
    ]);
  });

  it("any one-edit typo of an action field gets a did-you-mean; strict refuses it with its pointer, otherwise it round-trips", () => {
    fc.assert(
      // Through JSON text first: JSON has no -0, which fast-check's values may hold.
      fc.property(
        knownTypo,
        fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown),
        ({ typo }, value) => {
          const suggestion = didYouMean(typo, ACTION_FIELDS);
          expect(suggestion).toBeDefined();
          const input = proposalWith({ [typo]: value });
          const pointer = `/actions/1/${typo}`;
          let refused: unknown;
          try {
            parseProposal(input, { strict: true });
          } catch (error) {
            refused = error;
          }
          expect(refused).toBeInstanceOf(CarError);
          expect(refused).toMatchObject({ code: "invalid_proposal" });
          const problems = (refused as CarError).details.problems ?? [];
          expect(problems).toContainEqual({ pointer, message: `unknown field '${typo}' — did you mean '${suggestion}'?` });
          // Not strict: kept, reported, and written back out unchanged.
          const parsed = parseProposal(input);
          expect(unknownFields(parsed).map((f) => f.pointer)).toEqual([pointer]);
          expect(serializeProposal(parsed)["actions"]).toMatchObject([{}, { [typo]: value }]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("strict parsing of any proposal fails only with invalid_proposal, and passes exactly when no field is unknown", () => {
    const key = fc.oneof(fc.constantFrom(...ACTION_FIELDS, "__proto__", "constructor"), fc.string({ maxLength: 12 }));
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }), (extra) => {
        const input = { actions: [{ ...extra, id: "a", type: "state_read", parameters: { key: "k" } }] };
        const unknown = unknownFields(input);
        try {
          parseProposal(input, { strict: true });
          expect(unknown).toEqual([]);
        } catch (error) {
          expect(error).toBeInstanceOf(CarError);
          expect((error as CarError).code).toBe("invalid_proposal");
        }
        if (unknown.length > 0) expect(() => parseProposal(input, { strict: true })).toThrow(CarError);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses the unknown fields of an already parsed pair when asked to be strict", () => {
    const pair = parseProposalWithGraph(proposalWith({ max_retry: 2 }));
    expect(parseProposalWithGraph(pair)).toBe(pair);
    expect(() => parseProposalWithGraph(pair, { strict: true })).toThrow("/actions/1/max_retry: unknown field 'max_retry' — did you mean 'max_retries'?");
  });
});
