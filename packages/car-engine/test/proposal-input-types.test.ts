/**
 * What `Runtime.executeProposal` and `verifyProposal` accept, pinned for the
 * compiler: a producer's input shape (the spec's minimal proposal type-checks
 * as written), a parsed proposal, the trusted `{ proposal, graph }` pair, or
 * JSON text — and a wrong shape is a type error. The `expectTypeOf` and
 * `@ts-expect-error` lines are checked by `tsc` (the package's typecheck
 * includes test/). The types are no guard at run time: input that reaches the
 * runtime past them (from JavaScript, or cast) still gets a typed error.
 */
import { type ActionProposal, type ActionProposalInput, type ParsedProposal, parseProposal, parseProposalWithGraph } from "@car/ir";
import { describe, expect, expectTypeOf, it } from "vitest";
import { Runtime } from "../src/index.ts";

type Accepted = Parameters<Runtime["executeProposal"]>[0];

describe("executeProposal's parameter type", () => {
  it("accepts the spec's minimal proposal as written, a parsed proposal, the parsed pair and JSON text", async () => {
    const rt = new Runtime();
    rt.registerTool("read_file", () => ({ content: "text" }));
    rt.registerTool("summarize", ({ text_ref }) => ({ summary: String(text_ref) }));
    // car-spec.md §Action / proposal shape, verbatim: no annotation, no cast.
    const minimal = await rt.executeProposal({
      actions: [
        { id: "a1", type: "tool_call", tool: "read_file", parameters: { path: "/tmp/foo.txt" }, dependencies: [] },
        { id: "a2", type: "tool_call", tool: "summarize", parameters: { text_ref: "$a1.output" }, dependencies: ["a1"] },
      ],
    });
    expect(minimal.results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    expectTypeOf<ActionProposalInput>().toExtend<Accepted>();
    expectTypeOf<ActionProposal>().toExtend<Accepted>();
    expectTypeOf<ParsedProposal>().toExtend<Accepted>();
    expectTypeOf<string>().toExtend<Accepted>();
    expectTypeOf<Parameters<Runtime["verifyProposal"]>[0]>().toEqualTypeOf<Accepted>();
    const parsed = parseProposal({ actions: [{ type: "state_write", parameters: { key: "k", value: 1 } }] });
    expect((await rt.executeProposal(parsed)).results[0]!.status).toBe("succeeded");
    expect((await rt.executeProposal(parseProposalWithGraph({ id: "pair", actions: [] }))).proposal_id).toBe("pair");
    expect((await rt.executeProposal('{"id":"text","actions":[]}')).proposal_id).toBe("text");
  });

  it("refuses a wrong shape at compile time, and still refuses it at run time when it gets past", async () => {
    const rt = new Runtime();
    expectTypeOf<{ actions: number }>().not.toExtend<Accepted>();
    expectTypeOf<{ actions: [{ type: "teleport" }] }>().not.toExtend<Accepted>();
    expectTypeOf<number>().not.toExtend<Accepted>();
    // @ts-expect-error `actions` must be an array of actions.
    const five = rt.executeProposal({ actions: 5 });
    await expect(five).rejects.toMatchObject({ code: "invalid_proposal" });
    // @ts-expect-error an action needs its `type`.
    const untyped = rt.executeProposal({ actions: [{ id: "a", tool: "x" }] });
    await expect(untyped).rejects.toMatchObject({ code: "invalid_proposal" });
    // @ts-expect-error not a proposal at all.
    await expect(rt.executeProposal(42)).rejects.toMatchObject({ code: "invalid_proposal" });
    // @ts-expect-error the same for verification.
    expect(() => rt.verifyProposal({ actions: "none" })).toThrow(expect.objectContaining({ code: "invalid_proposal" }));
  });
});
