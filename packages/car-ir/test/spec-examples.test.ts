/**
 * Every `jsonc` example in agent-ir-spec.md parses as its shape and
 * round-trips through the matching parse/serialise pair.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  jsonEquals,
  parseAction,
  parseProposal,
  parseToolSchema,
  serializeAction,
  serializeCostSummary,
  serializeProposal,
  serializeProposalResult,
  type ActionResult,
  type CostSummary,
  type JsonObject,
  type JsonValue,
  type ProposalResult,
} from "../src/index.ts";
import { shapeProblems } from "../src/internal.ts";

/** Removes `//` and `/* *\/` comments outside string literals. */
export function stripJsonComments(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      i = text.indexOf("*/", i + 2) + 1;
    } else {
      out += c;
    }
  }
  return out;
}

const markdown = readFileSync(new URL("./fixtures/agent-ir-spec-examples.md", import.meta.url), "utf8");
const examples = [...markdown.matchAll(/```jsonc\n([\s\S]*?)```/g)].map((m) => JSON.parse(stripJsonComments(m[1]!)) as JsonObject);

/** `output` holds everything `input` says, recursively; it may add defaulted fields to objects. */
function covers(output: JsonValue | undefined, input: JsonValue): boolean {
  if (Array.isArray(input)) return Array.isArray(output) && output.length === input.length && input.every((v, i) => covers(output[i], v));
  if (input !== null && typeof input === "object") {
    if (output === null || typeof output !== "object" || Array.isArray(output)) return false;
    return Object.keys(input).every((k) => covers(output[k], input[k]!));
  }
  return jsonEquals(output, input);
}

function expectSuperset(output: JsonObject, input: JsonObject): void {
  for (const key of Object.keys(input)) expect(covers(output[key], input[key]!), `field ${key}`).toBe(true);
}

describe("agent-ir-spec.md examples", () => {
  it("has all nine examples", () => {
    expect(examples).toHaveLength(9);
  });

  const [proposal, action, precondition, toolSchema, costSummary, costTarget, proposalResult, verification, violation] = examples as [
    JsonObject,
    JsonObject,
    JsonObject,
    JsonObject,
    JsonObject,
    JsonObject,
    JsonObject,
    JsonObject,
    JsonObject,
  ];

  it("ActionProposal parses and round-trips", () => {
    const parsed = parseProposal(proposal);
    const wire = serializeProposal(parsed);
    expect(wire).toEqual(proposal);
    expect(serializeProposal(parseProposal(JSON.stringify(wire)))).toEqual(wire);
  });

  it("Action parses and round-trips, with defaults added for the fields it omits", () => {
    const parsed = parseAction(action);
    expect(parsed.compensation).toEqual({ type: "tool", tool: "rollback_deploy", parameters: { env: "staging" } });
    const wire = serializeAction(parsed);
    expectSuperset(wire, action);
    expect(wire["dependencies"]).toEqual([]);
    expect(serializeAction(parseAction(wire))).toEqual(wire);
    // It is also a valid one-action proposal.
    expect(parseProposal({ actions: [action] }).actions[0]!.id).toBe("a1");
  });

  it("Precondition parses and round-trips inside an action", () => {
    expect(shapeProblems("precondition", precondition)).toEqual([]);
    const wire = serializeAction(parseAction({ type: "assertion", preconditions: [precondition] }));
    expect((wire["preconditions"] as JsonObject[])[0]).toEqual(precondition);
  });

  it("ToolSchema parses and round-trips", () => {
    expect(JSON.parse(JSON.stringify(parseToolSchema(toolSchema)))).toEqual(toolSchema);
  });

  it("CostSummary and CostTarget validate; CostSummary round-trips", () => {
    expect(shapeProblems("costSummary", costSummary)).toEqual([]);
    expect(serializeCostSummary(costSummary as unknown as CostSummary)).toEqual(costSummary);
    expect(shapeProblems("costTarget", costTarget)).toEqual([]);
  });

  it("ProposalResult validates and round-trips (rolled_back kept, terminal absent)", () => {
    expect(shapeProblems("proposalResult", proposalResult)).toEqual([]);
    const wire = serializeProposalResult(proposalResult as unknown as ProposalResult);
    expect(wire).toEqual(proposalResult);
    expect("terminal" in ((wire["results"] as JsonObject[])[0] as unknown as ActionResult)).toBe(false);
  });

  it("VerificationResult and PolicyViolation validate", () => {
    expect(shapeProblems("verificationResult", verification)).toEqual([]);
    expect(shapeProblems("policyViolation", violation)).toEqual([]);
  });
});
