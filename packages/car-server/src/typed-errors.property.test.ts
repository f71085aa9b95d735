/**
 * Every JSON-RPC method, called over a real socket with arbitrary params
 * (shaped like the real ones, filled with any JSON, including values nested
 * right up to the frame limit), answers with a result or a JSON-RPC error
 * carrying a CAR code — never an internal error (-32603), never a dropped
 * connection. Server→client calls are answered with arbitrary JSON too.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_FRAME_DEPTH } from "./jsonrpc.ts";
import { METHODS } from "./methods/index.ts";
import { type TestClient, useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-typed-errors-");

/** Param names the methods read, so arbitrary params reach past the first "x is required". */
const PARAM_NAMES = [
  "proposal",
  "proposal_a",
  "proposal_b",
  "test_states",
  "initial_state",
  "state",
  "max_actions",
  "strict",
  "key",
  "value",
  "tenant_id",
  "name",
  "rule",
  "target",
  "pattern",
  "value_json",
  "tools",
  "policies",
  "client_id",
  "handle",
  "tier",
  "agent_id",
  "mode",
  "fingerprint",
  "required_tier",
  "action",
  "reason",
  "stages",
  "task",
  "agents",
  "items",
  "mapper",
  "reducer",
  "workers",
  "supervisor",
  "synthesizer",
  "rounds",
  "max_rounds",
  "budget",
  "agent_timeout_ms",
  "max_concurrency",
  "policy",
  "kinds",
  "action_id",
  "proposal_id",
  "since",
  "until",
  "data_matches",
  "limit",
  "protocol_version",
  "required_capabilities",
  "parameters",
  "session_id",
  "scope",
] as const;

function nestedTo(depth: number): unknown {
  let v: unknown = "leaf";
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { d: v } : [v];
  return v;
}

const json = fc.jsonValue({ maxDepth: 3 });
/** Numbers stay small enough that a legitimate count (rounds, limits) cannot make one call run for minutes. */
const smallJson = json.filter((v) => !JSON.stringify(v).match(/\d{5,}/));
const deep = fc.constantFrom(nestedTo(MAX_FRAME_DEPTH - 4), nestedTo(MAX_FRAME_DEPTH + 10));
/** Values that used to escape as internal errors, mixed in often so every method meets them. */
const knownHostile = fc.constantFrom(
  { v: [{ a: 1 }, { a: 1 }] },
  { e: { a: 1 } },
  { k: `${"a".repeat(40)}!` },
  { v: "$a.output" },
  { key: "$a.output" },
  { key: "tenant:x:y" },
);
const parameters = fc.oneof(
  knownHostile,
  fc.dictionary(
    fc.constantFrom("key", "value", "keys", "v", "e", "k", "__proto__"),
    fc.oneof(smallJson, deep, fc.constantFrom("$a.output", [{ a: 1 }, { a: 1 }], { a: 1 }, "a".repeat(40))),
  ),
  smallJson,
);
/** Mostly well-formed proposals (unique ids, known tools), so calls get past parsing to schemas, state and execution. */
const proposalLike = fc
  .array(
    fc.record(
      {
        type: fc.constantFrom("tool_call", "tool_call", "state_write", "state_read", "assertion", "bogus"),
        tool: fc.constantFrom("t", "u"),
        parameters,
        state_dependencies: fc.array(fc.string(), { maxLength: 2 }),
      },
      { requiredKeys: ["type", "tool", "parameters"] },
    ),
    { maxLength: 4 },
  )
  .map((actions) => ({ actions: actions.map((a, i) => ({ id: i === 0 ? "a" : `x${i}`, ...(i > 0 ? { dependencies: ["a"] } : {}), ...a })) }));
const params = fc.oneof(
  fc.record({ proposal: proposalLike, initial_state: fc.oneof(smallJson, deep) }, { requiredKeys: ["proposal"] }),
  fc.dictionary(fc.constantFrom(...PARAM_NAMES), fc.oneof(smallJson, proposalLike, deep), { maxKeys: 6 }),
  fc.record({ proposal: proposalLike }),
  fc.record({ key: fc.string(), value: deep }),
  fc.array(smallJson, { maxLength: 3 }),
  smallJson,
);

async function hostileClient(): Promise<TestClient> {
  const c = await fx.client();
  c.handle("tools.execute", () => ({ result: { n: 1, nested: nestedTo(40) } }));
  // The model answers with a plan that is not one: left unanswered, a `task` among the params made
  // planner.run wait out its whole propose timeout (300 s), past the test's own.
  c.handle("planner.propose", () => ({ result: { actions: "not a list", nested: nestedTo(40) } }));
  c.handle("multi.run_agent", (p) => ({ result: { name: p?.spec?.name ?? "x", answer: "a", turns: 1, tool_calls: 0, duration_ms: 1, error: null } }));
  // Schemas with the keywords that used to throw on parsed (prototype-free) values.
  const schema = { type: "object", properties: { v: { type: "array", uniqueItems: true }, e: { enum: [{ a: 1 }, "x"] }, k: { pattern: "^(a+)+$" } } };
  await c.result("tools.register", [
    { name: "t", parameters: schema },
    { name: "u", returns: { uniqueItems: true } },
  ]);
  return c;
}

describe("every server method answers bad params with a typed JSON-RPC error", () => {
  it.each(Object.keys(METHODS))("%s: never -32603, never a dropped connection", async (method) => {
    const c = await hostileClient();
    await fc.assert(
      fc.asyncProperty(params, async (p) => {
        const reply = await c.call(method, p);
        if (reply.error !== undefined) {
          expect(reply.error.code, `${method}: ${reply.error.message}`).not.toBe(-32603);
          expect(typeof reply.error.message).toBe("string");
        }
      }),
      { numRuns: 40 },
    );
    expect(c.socket.readyState).toBe(c.socket.OPEN);
    expect(await c.result("state.set", { key: "still", value: "served" })).toBe("ok");
  });

  it("state.set of a value nested past the frame limit is a -32600 under its id, and the connection stays", async () => {
    const c = await fx.client();
    const reply = await c.call("state.set", { key: "deep", value: nestedTo(MAX_FRAME_DEPTH + 1) });
    expect(reply.error).toMatchObject({ code: -32600, message: expect.stringContaining(`${MAX_FRAME_DEPTH} levels`) });
    expect(await c.result("state.set", { key: "ok", value: nestedTo(MAX_FRAME_DEPTH - 4) })).toBe("ok");
  });
});
