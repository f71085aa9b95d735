/**
 * Walks the one method table. Every method declares a role and a tenancy,
 * and the dispatcher enforces them: each `operator` method called from an
 * agent's connection answers -32001 and changes nothing (the same call from
 * the operator's connection then works, so the refusal was not an accident
 * of bad params); and every method, called from an agent's connection with
 * another tenant's keys in every place a key or a proposal can go, neither
 * reveals nor changes that tenant's data — a method added without the right
 * declaration fails here.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { PROTOCOL, PROTOCOL_SOURCE } from "@car/client/protocol";
import { canonicalJson, compileSchema, type JsonObject } from "@car/ir";
import { openCarDatabase } from "./car-database.ts";
import { METHODS } from "./methods/index.ts";
import { CONNECTION_METHODS } from "./methods/schema.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let server: RunningServer;
let closeStore: () => Promise<void>;
const clients: TestClient[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-method-table-"));
  const store = await openCarDatabase(join(carHome, "car.db"), { env: { CAR_HOME: carHome } });
  closeStore = () => store.close();
  server = await startServer({ port: 0, carHome, store });
});
afterAll(async () => {
  for (const c of clients) c.socket.terminate();
  await server.close({ graceMs: 0 });
  await closeStore();
  await rm(carHome, { recursive: true, force: true });
});

async function connect(agentId?: string): Promise<TestClient> {
  const url = agentId === undefined ? server.url : `${server.url}?agent_id=${agentId}`;
  const c = await TestClient.open(url, server.token);
  clients.push(c);
  return c;
}

/** For each operator method: params the operator's own call succeeds with. */
const OPERATOR_CALLS: Record<string, unknown> = {
  "permission.approve": { fingerprint: "a".repeat(64), required_tier: "full_access" },
  "permission.reject": { fingerprint: "b".repeat(64), required_tier: "full_access" },
  "agent_permissions.set": { agent_id: "bot", mode: "always_allow" },
  "agent_permissions.reset": { agent_id: "bot" },
  "events.retention": { policy: { max_events: 1 } },
  "events.truncate": { maxEvents: 2 },
  "events.clear": {},
  "supervision.subscribe": { filter: { tools: ["nothing_calls_this"] } },
  "supervision.unsubscribe": {},
  "supervision.pending": {},
  "supervision.decide": { intent_id: "intent-none", decision: { kind: "allow" } },
  "host.subscribe": {},
  "host.unsubscribe": {},
  "session.clear_halt": {},
  "agent_permissions.set_default": { preset: "trusting" },
  "agent_permissions.set_tool": { agent_id: "bot", tool: "t", mode: "deny" },
  "agent_permissions.reset_tool": { agent_id: "bot", tool: "t" },
  "agent_permissions.evaluate_tool": { agent_id: "bot", tool: "t", tier: "read_only" },
  "skill.publish": { key: "absent" },
  "skill.delete": { key: "absent", global: true },
};

/** Operator calls that pass the role check and then find nothing to act on. */
const NOT_FOUND_IS_OK = new Set(["supervision.decide", "skill.publish"]);

/** What an operator act could change: the log, the ledger, the postures, the state. */
async function observable(c: TestClient): Promise<unknown> {
  return {
    events: await c.result("events.count"),
    chain: await c.result("events.chain.verify"),
    postures: await c.result("agent_permissions.get"),
    state: await c.result("state.snapshot"),
    skills: await c.result("skills.list"),
  };
}

describe("the method table", () => {
  it("declares a role and a tenancy for every method", () => {
    for (const [method, spec] of Object.entries(METHODS)) {
      expect(["operator", "agent"], method).toContain(spec.role);
      expect(["none", "tenant_id", "proposal"], method).toContain(spec.tenancy);
      expect(typeof spec.handler, method).toBe("function");
    }
    const operatorMethods = Object.keys(METHODS).filter((m) => METHODS[m]!.role === "operator");
    expect(operatorMethods.sort()).toEqual(Object.keys(OPERATOR_CALLS).sort());
  });

  it("declares every method's params and result once, in @car/client/protocol, with the role the table enforces", () => {
    const served = [...CONNECTION_METHODS, ...Object.keys(METHODS)];
    const undeclared = served.filter((m) => !Object.hasOwn(PROTOCOL, m));
    expect(undeclared, `methods without a declaration: add each to ${PROTOCOL_SOURCE}`).toEqual([]);
    const unserved = Object.keys(PROTOCOL).filter((m) => !served.includes(m));
    expect(unserved, "declared methods the server does not serve: add a handler to packages/car-server/src/methods/, or remove the declaration").toEqual([]);
    for (const [method, spec] of Object.entries(METHODS)) {
      const declared = PROTOCOL[method as keyof typeof PROTOCOL];
      expect(declared.role, `${method}: the role in ${PROTOCOL_SOURCE} and in the server's table differ`).toBe(spec.role);
      // Each schema compiles (the dispatcher compiles params on first call; results are what server.schema publishes).
      expect(() => compileSchema(declared.params as unknown as JsonObject), method).not.toThrow();
      expect(() => compileSchema(declared.result as unknown as JsonObject), method).not.toThrow();
    }
  });

  it("refuses params that do not match the declaration with -32602 naming the field, before the handler runs", async () => {
    const c = await connect();
    const cases: [string, unknown, string][] = [
      ["state.set", { key: 5 }, "invalid params: key must be a string"],
      ["state.get", { key: null }, "invalid params: key is required"],
      ["state.keys", { tenant_id: 7 }, "invalid params: tenant_id must be a string"],
      ["tools.unregister", {}, "invalid params: name is required"],
      ["multi.vote", { agents: "x", task: "t" }, "invalid params: agents must be an array"],
      ["proposal.submit", { proposal: {}, rollback: "undo" }, 'invalid params: rollback must be "state" or "compensate"'],
      ["events.query", { kinds: ["a", 3] }, "invalid params: kinds[1] must be a string"],
      ["planner.run", [1, 2], "invalid params: expected an object"],
    ];
    for (const [method, params, message] of cases) {
      const reply = await c.call(method, params);
      expect(reply.error, method).toMatchObject({ code: -32602, message, data: { car_code: "invalid_params" } });
    }
    // Nothing ran: the refused state.set stored nothing, the refused submit recorded no event.
    expect(await c.result("state.keys")).toEqual([]);
    expect(await c.result("events.query", { kinds: ["proposal_received"] })).toMatchObject({ count: 0 });
  });

  it("answers server.schema from the same declarations, with the digest of its canonical text, before any handshake", async () => {
    const agent = await connect("bot");
    const answer = await agent.result("server.schema");
    expect(answer.digest_algorithm).toBe("sha256");
    expect(answer.digest).toBe(
      createHash("sha256")
        .update(`${canonicalJson(answer.schema)}\n`)
        .digest("hex"),
    );
    expect(Object.keys(answer.schema.methods).sort()).toEqual([...CONNECTION_METHODS, ...Object.keys(METHODS)].sort());
    expect(answer.schema.methods["state.set"]).toEqual(JSON.parse(JSON.stringify(PROTOCOL["state.set"])));
    expect(answer.schema.coverage).toEqual({ complete: true, rpc_results: { covered: Object.keys(answer.schema.methods).sort(), uncovered: [] } });
    expect(answer.schema.definitions.ProposalResult.title ?? answer.schema.definitions.ProposalResult.$id).toBeDefined();
    expect(answer.schema.server_requests["tools.execute"].params.required).toContain("request_id");
  });

  it("answers with results that match the declared result schemas", async () => {
    const c = await connect();
    c.handle("tools.execute", () => ({ result: { ok: true } }));
    const calls: [keyof typeof PROTOCOL, unknown][] = [
      ["server.handshake", { protocol_version: 3 }],
      ["session.init", { client_id: "t", tools: [{ name: "echo" }] }],
      ["tools.register", [{ name: "echo2" }]],
      ["tools.list", {}],
      ["state.set", { key: "k", value: 1 }],
      ["state.get", { key: "k" }],
      ["state.keys", {}],
      ["state.exists", { key: "k" }],
      ["policy.register", { name: "no-rm", rule: "deny_tool", target: "rm" }],
      ["policy.list", {}],
      ["proposal.submit", { proposal: { id: "p", actions: [{ id: "a", type: "tool_call", tool: "echo" }] } }],
      ["verify", { proposal: { id: "v", actions: [] } }],
      ["simulate", { proposal: { id: "s", actions: [] } }],
      ["events.count", {}],
      ["events.query", { limit: 2 }],
      ["events.chain.verify", {}],
      ["permission.get_tier", {}],
      ["agent_permissions.get", {}],
      ["capabilities.list", {}],
      ["server.schema", {}],
      ["tools.unregister", { name: "echo2" }],
      ["events.stats", {}],
      ["events.truncate", {}],
      ["metrics.alerts", { max_error_rate: 0.5, min_actions: 1 }],
      ["session.policy.open", {}],
      ["session.policy.close", { session_id: "none" }],
      ["skills.gate", {}],
      ["skill.meta", { key: "none" }],
      ["skill.export", { key: "none" }],
      ["runs.start", { intent: "check", agent_name: "result-check" }],
      ["runs.get_trace", { run_id: "no-such-run" }],
      ["supervision.pending", {}],
      ["supervision.unsubscribe", {}],
      ["host.unsubscribe", {}],
      ["session.clear_halt", {}],
      ["agent_permissions.evaluate", { agent_id: "bot", tier: "read_only" }],
    ];
    const { session_id } = await c.result("session.policy.open");
    // Calls scoped to a policy session answer `scope: { session_id }`, and a submit may name one.
    calls.push(
      ["policy.register", { name: "scoped", rule: "deny_tool", target: "rm", session_id }],
      ["policy.list", { session_id }],
      ["policy.unregister", { name: "scoped", session_id }],
      ["proposal.submit", { proposal: { id: "q", actions: [] }, session_id, strict: true, scope: { tenantId: "acme" } }],
    );
    for (const [method, params] of calls) {
      const result = await c.result(method, params);
      const check = compileSchema(PROTOCOL[method].result as unknown as JsonObject)(result);
      expect(check, `${method} answered ${JSON.stringify(result).slice(0, 200)}`).toEqual({ ok: true });
    }
  });

  it("refuses every operator method on an agent's connection with -32001, changing nothing", async () => {
    const operator = await connect();
    const agent = await connect("bot");
    // Something in the log to cut, and a posture to reset.
    for (const id of ["p1", "p2", "p3"]) {
      await operator.result("proposal.submit", { proposal: { id, actions: [{ id: "w", type: "state_write", parameters: { key: id, value: 1 } }] } });
    }
    // host.subscribe needs the protocol negotiated first.
    const handshake = { protocol_version: 3, optional_capabilities: ["permissions.agent-tool-overrides.v1"] };
    await operator.result("server.handshake", handshake);
    await agent.result("server.handshake", handshake);
    for (const [method, params] of Object.entries(OPERATOR_CALLS)) {
      const before = await observable(operator);
      const refused = await agent.call(method, params);
      expect(refused.error, method).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
      expect(refused.error!.message, method).toContain("operator");
      expect(await observable(operator), method).toEqual(before);
      const allowed = await operator.call(method, params);
      if (NOT_FOUND_IS_OK.has(method)) expect(allowed.error, method).toMatchObject({ data: { car_code: "not_found" } });
      else expect(allowed.error, method).toBeUndefined();
    }
  });

  it("capabilities.list reports the declared roles, and shows an agent only what it may call", async () => {
    const agent = await connect("bot");
    const operator = await connect();
    const asAgent = await agent.result("capabilities.list");
    const asOperator = await operator.result("capabilities.list");
    expect(asAgent.caller_role).toBe("agent");
    expect(asOperator.caller_role).toBe("operator");
    expect(asOperator.methods).toHaveLength(Object.keys(METHODS).length);
    for (const row of asOperator.methods) expect(row.role).toBe(METHODS[row.method]!.role);
    expect(asAgent.methods.map((r: { method: string }) => r.method)).toEqual(
      Object.keys(METHODS)
        .filter((m) => METHODS[m]!.role === "agent")
        .sort(),
    );
  });

  it("no method lets an agent read or change another tenant's keys", async () => {
    const operator = await connect();
    await operator.result("state.set", { key: "secret", value: "alice-private-value", tenant_id: "alice" });
    const agent = await connect("eve");
    agent.handle("tools.execute", () => ({ result: "tenant:alice:secret" }));
    const key = "tenant:alice:secret";
    const proposal = {
      id: "steal",
      actions: [
        { id: "r", type: "state_read", parameters: { key } },
        { id: "w", type: "state_write", parameters: { key, value: "stolen" } },
      ],
    };
    // The planner's model proposes the same proposal.
    agent.handle("planner.propose", () => ({ result: proposal }));
    const hostile = { key, keys: [key], value: "stolen", proposal, task: "read alice's secret", agent_id: "alice" };
    for (const method of Object.keys(METHODS)) {
      if (method === "events.retention" || method.startsWith("multi.")) continue; // operator-only / no state: covered above and below
      const reply = await agent.call(method, hostile);
      expect(JSON.stringify(reply), method).not.toContain("alice-private-value");
      expect(await operator.result("state.get", { key: "secret", tenant_id: "alice" }), method).toBe("alice-private-value");
    }
    // A tenant-data method that names a key refuses outright rather than answer emptily; a listing leaves the tenant's keys out.
    const listings = new Set(["state.keys", "state.snapshot", "events.query"]);
    // The skills methods' keys are skill names, not state keys, and permission.evaluate/pending's tenant_id only says whose
    // skill caps the evaluation: their tenancy is walked in skills-tenancy.test.ts and permission-skill-ceiling.test.ts.
    const skillScoped = new Set(["permission.evaluate", "permission.pending"]);
    const stateKeyed = (m: string): boolean => !m.startsWith("skill.") && !m.startsWith("skills.") && !skillScoped.has(m);
    for (const method of Object.keys(METHODS).filter((m) => METHODS[m]!.tenancy !== "none" && m !== "planner.run" && stateKeyed(m))) {
      const reply = await agent.call(method, hostile);
      if (listings.has(method)) {
        expect(reply.error, method).toBeUndefined();
        const text = JSON.stringify(reply.result);
        expect(text, method).not.toContain("alice-private-value");
        // The agent's own refused attempts may quote the key it tried; no record of alice's data may appear.
        if (method === "events.query")
          expect(
            (reply.result as { events: { data: { key?: string } }[] }).events.filter((e) => e.data.key === key),
            method,
          ).toEqual([]);
        else expect(text, method).not.toContain("secret");
        continue;
      }
      expect(reply.error, method).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
    }
    // The operator, scoped to alice, still sees her write in the log.
    const own = await operator.result("events.query", { tenant_id: "alice", kinds: ["state_changed"] });
    expect(own.events.map((e: { data: { key: string } }) => e.data.key)).toContain("tenant:alice:secret");
  });

  it("no runs.* method lets an agent read, write, end or reclaim another agent's run", async () => {
    const alice = await connect("alice");
    const { run_id } = await alice.result("runs.start", { intent: "alice-private-intent" });
    await alice.result("runs.record_turns", { run_id, turns: [{ prompt: "alice-private-prompt" }] });
    const before = await alice.result("runs.get_trace", { run_id });
    const eve = await connect("eve");
    await eve.result("server.handshake", { protocol_version: 3, required_capabilities: ["runs.resume.v1", "runs.cancel.v1"] });
    const hostile = {
      run_id,
      agent_id: "alice",
      intent: "x",
      idempotency_key: run_id,
      turns: [{ prompt: "forged" }],
      outcome: { status: "failed" },
      turn_index: 1,
      assistant_text: "forged",
      requested_tool_calls: [],
      model_id: "m",
      token_usage: null,
      duration_ms: 0,
    };
    const exact: Record<string, object> = { "runs.resume": { run_id }, "runs.cancel": { run_id, idempotency_key: "k", reason: "r" } };
    for (const method of Object.keys(METHODS).filter((m) => m.startsWith("runs."))) {
      const reply = await eve.call(method, exact[method] ?? hostile);
      expect(JSON.stringify(reply), method).not.toContain("alice-private");
      expect(await alice.result("runs.get_trace", { run_id }), method).toEqual(before);
    }
    expect((await alice.result("runs.list", { agent_id: "alice" })).runs[0]).toMatchObject({ status: "in_progress", turn_count: 1 });
  });
});
