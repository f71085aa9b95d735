import { describe, expect, it } from "vitest";
import { parseAgentOutput, parseAgentSpec, parseStateMutation, parseToolSchema, parseTraceEvent } from "./index.ts";
import { carErrorOf } from "../test/car-error.ts";

describe("parseToolSchema", () => {
  it("applies defaults and keeps unknown fields", () => {
    expect(JSON.parse(JSON.stringify(parseToolSchema('{"name":"t","annotations":{"x":1}}')))).toEqual({
      name: "t",
      source: "user_defined",
      description: "",
      parameters: {},
      idempotent: false,
      annotations: { x: 1 },
    });
  });

  it("reports every problem with its pointer", () => {
    const error = carErrorOf(() => parseToolSchema({ source: "npm", parameters: [], rate_limit: { max_calls: -1 } }));
    expect(error.code).toBe("invalid_params");
    expect(error.details.problems?.map((p) => p.pointer).sort()).toEqual([
      "/name",
      "/parameters",
      "/rate_limit/interval_secs",
      "/rate_limit/max_calls",
      "/source",
    ]);
  });
});

describe("parseAgentSpec / parseAgentOutput (strict)", () => {
  const output = { name: "r", answer: "ok", turns: 1, tool_calls: 0, duration_ms: 100.0, error: null };

  it("accepts the seed shapes", () => {
    expect(parseAgentOutput(JSON.stringify(output))).toEqual(output);
    const spec = { name: "r", system_prompt: "p", tools: ["grep"], max_turns: 5, metadata: { model: "m" } };
    expect(parseAgentSpec(spec)).toEqual(spec);
  });

  it("fails a missing field and a tool_calls list", () => {
    const { error: _e, ...missing } = output;
    expect(carErrorOf(() => parseAgentOutput(missing)).details.problems).toEqual([{ pointer: "/error", message: "required field 'error' is missing" }]);
    const listed = carErrorOf(() => parseAgentOutput({ ...output, tool_calls: [] }));
    expect(listed.code).toBe("invalid_output");
    expect(listed.details.problems?.[0]?.pointer).toBe("/tool_calls");
    expect(carErrorOf(() => parseAgentOutput({ ...output, tool_calls: 1.5 })).details.problems?.[0]?.pointer).toBe("/tool_calls");
    expect(carErrorOf(() => parseAgentSpec({ name: "r" })).details.problems).toHaveLength(4);
  });
});

describe("parseTraceEvent / parseStateMutation", () => {
  it("parses the learning-loop record", () => {
    const event = { kind: "action_failed", action_id: "s2", tool: "scraper", data: { task: "t" }, reward: 0.0 };
    expect(parseTraceEvent(event)).toEqual(event);
    expect(carErrorOf(() => parseTraceEvent({ ...event, kind: "started" })).details.problems?.[0]?.pointer).toBe("/kind");
  });

  it("distinguishes a set to null from a delete", () => {
    expect(parseStateMutation('{"op":"set","value":null}')).toEqual({ op: "set", value: null });
    expect(parseStateMutation('{"op":"delete"}')).toEqual({ op: "delete" });
    expect(carErrorOf(() => parseStateMutation('{"op":"set"}')).details.problems?.[0]?.pointer).toBe("/value");
    expect(carErrorOf(() => parseStateMutation("not json")).code).toBe("invalid_params");
  });
});
