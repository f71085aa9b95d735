/**
 * What a supervisor is shown of a proposal: each action's key names (sorted)
 * and the digest of its parameters, never a value; the proposal as
 * reversible as its least recoverable action; the audit record the intent
 * without its id; the filter subject the tools called and who submitted.
 */
import fc from "fast-check";
import { type JsonObject, paramsDigest, parseProposal } from "@car/ir";
import { describe, expect, it } from "vitest";
import { filterSubject, intentActions, intentRecord, supervisionIntent } from "./intent.ts";

const noSchema = () => undefined;
const key = fc.stringMatching(/^[a-z_]{1,8}$/);
/** Values a key name can never be (they contain `:`), so finding one in the intent means a value leaked. */
const value = fc.string({ minLength: 1, maxLength: 16 }).map((s) => `v:${s}`);

describe("the supervision intent", () => {
  it("shows sorted key names and the parameters' digest, never a value", () => {
    fc.assert(
      fc.property(fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 }), (params) => {
        const proposal = parseProposal({ id: "p", actions: [{ id: "a", type: "tool_call", tool: "read_file", parameters: params }] });
        const actions = intentActions({ proposal, schemaOf: noSchema });
        expect(actions[0]).toMatchObject({ id: "a", action_type: "tool_call", tool: "read_file", parameter_keys: Object.keys(params).sort() });
        expect(actions[0]!.parameters_digest).toBe(paramsDigest(params as JsonObject));
        const text = JSON.stringify(supervisionIntent("i-1", "p", actions, { source: "conn:s", session_id: "s" }));
        for (const v of Object.values(params)) expect(text).not.toContain(JSON.stringify(v).slice(1, -1));
      }),
    );
  });

  it("is as reversible as its least recoverable action; the record drops only the id; the subject names tools and submitter", () => {
    const proposal = parseProposal({
      id: "p",
      actions: [
        { id: "r", type: "tool_call", tool: "read_file", parameters: {} },
        { id: "s", type: "tool_call", tool: "send_email", parameters: { to: "x" } },
        { id: "w", type: "state_write", parameters: { key: "k", value: 1 } },
      ],
    });
    const actions = intentActions({ proposal, schemaOf: noSchema });
    const intent = supervisionIntent("i-1", "p", actions, { source: "agent:bot", session_id: null });
    expect(intent).toMatchObject({ id: "i-1", proposal_id: "p", source: "agent:bot", reversibility: "irreversible" });
    expect("session_id" in intent).toBe(false);
    expect(intent.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const { id: _id, ...rest } = intent;
    expect(intentRecord(intent)).toEqual(rest);
    expect(filterSubject(actions, "s", null)).toEqual({
      tools: ["read_file", "send_email"],
      session_id: "s",
      agent_id: undefined,
      reversibility: "irreversible",
    });
    const reads = intentActions({ proposal: parseProposal({ id: "q", actions: [proposal.actions[0]!] }), schemaOf: noSchema });
    expect(supervisionIntent("i-2", "q", reads, { source: "conn:s", session_id: "s" }).reversibility).toBe("reversible");
  });
});
