import { isCarError, parseProposalWithGraph } from "@car/ir";
import { describe, expect, it } from "vitest";
import { Runtime } from "../runtime.ts";
import { ActionFailure } from "./action-failure.ts";
import { TerminalToolError } from "./terminal-tool-error.ts";
import { jsonCallbackCaller, readToolAnswer } from "./tool-call.ts";
import type { ToolCall } from "./tool-call.ts";

const CALL: ToolCall = { tool: "t", params: { a: 1 }, action_id: "x", request_id: "r1", timeout_ms: null, session_id: null, attempt: 1 };
const signal = new AbortController().signal;

describe("reading a tool's answer", () => {
  it("passes any answer without an error through as the output", () => {
    for (const answer of [null, 3, "text", [1], { ok: true }, { error: null, value: 1 }]) expect(readToolAnswer(answer)).toEqual(answer);
  });

  it("throws a tool_error for {error}, a TerminalToolError only with terminal: true, and shows a non-string error as JSON", () => {
    const thrown = (answer: Parameters<typeof readToolAnswer>[0]): unknown => {
      try {
        readToolAnswer(answer);
      } catch (error) {
        return error;
      }
      throw new Error("did not throw");
    };
    const plain = thrown({ error: "disk full", terminal: "yes" });
    expect(isCarError(plain, "tool_error")).toBe(true);
    expect((plain as Error).message).toBe("disk full");
    const terminal = thrown({ error: "revoked", terminal: true });
    expect(terminal).toBeInstanceOf(TerminalToolError);
    expect((terminal as Error).message).toBe("revoked");
    expect((thrown({ error: { code: 7 } }) as Error).message).toBe('{"code":7}');
  });
});

describe("the JSON-string callback adapter", () => {
  it("sends the envelope as one JSON string and reads the answer, synchronously when the callback is", async () => {
    const seen: string[] = [];
    const caller = jsonCallbackCaller((json) => {
      seen.push(json);
      return '{"ok":true}';
    }, 1024);
    expect(caller(CALL, signal)).toEqual({ ok: true });
    expect(JSON.parse(seen[0]!)).toEqual(CALL);
    const asyncCaller = jsonCallbackCaller(async () => '{"error":"no","terminal":true}', 1024);
    await expect(asyncCaller(CALL, signal)).rejects.toBeInstanceOf(TerminalToolError);
    expect(() => jsonCallbackCaller(() => "not json", 1024)(CALL, signal)).toThrow(ActionFailure);
  });
});

describe("a typed tool caller", () => {
  it("receives the ToolCall object itself, the parsed parameters unserialised, and its {error} answers fail the action", async () => {
    const rt = new Runtime();
    rt.registerTool({ name: "remote", parameters: {} });
    const pair = parseProposalWithGraph({ id: "typed", actions: [{ id: "a", type: "tool_call", tool: "remote", parameters: { n: 1 }, timeout_ms: 500 }] });
    const calls: ToolCall[] = [];
    const result = await rt.executeProposal(pair, undefined, {
      session_id: "s1",
      toolCaller: async (call) => {
        calls.push(call);
        return readToolAnswer({ got: call.params });
      },
    });
    expect(result.results[0]!.status).toBe("succeeded");
    expect(result.results[0]!.output).toEqual({ got: { n: 1 } });
    expect(calls[0]!.params).toBe(pair.proposal.actions[0]!.parameters);
    expect(calls[0]).toMatchObject({ tool: "remote", action_id: "a", timeout_ms: 500, session_id: "s1", attempt: 1 });

    const failed = await rt.executeProposal({ actions: [{ id: "b", type: "tool_call", tool: "remote" }] }, undefined, {
      toolCaller: () => readToolAnswer({ error: "denied by policy: nope" }),
    });
    expect(failed.results[0]).toMatchObject({ status: "failed", error: "denied by policy: nope" });
    const classes = rt.events.query({ kinds: ["action_failed"] }).map((e) => e.data["error_class"]);
    expect(classes).toEqual(["rejected_by_policy"]);
    await expect(rt.executeProposal(pair, () => "null", { toolCaller: () => null })).rejects.toMatchObject({ code: "invalid_params" });
  });
});
