/**
 * Tenancy is a boundary: every path into state — the five `state.*`
 * methods with and without a tenant, a tenant id built to reach another's
 * namespace, and every place a proposal names or computes a key — is tried
 * against tenant alice's keys from outside her tenant. One connection holds
 * the whole store here, so nothing but the tenant scope stands between them.
 */
import { describe, expect, it } from "vitest";
import { useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-tenancy-");

async function withAlice() {
  const c = await fx.client();
  await c.result("state.set", { key: "secret", value: "alice's", tenant_id: "alice" });
  await c.result("state.set", { key: "x:secret", value: "alice's nested", tenant_id: "alice" });
  await c.result("state.set", { key: "plain", value: "unscoped" });
  return c;
}

const aliceKeys = ["tenant:alice:secret", "tenant:alice:x:secret"];

describe("tenant isolation", () => {
  it("a call without a tenant cannot read, test, write or list a tenant's keys", async () => {
    const c = await withAlice();
    for (const key of aliceKeys) {
      for (const [method, params] of [
        ["state.get", { key }],
        ["state.exists", { key }],
        ["state.set", { key, value: "overwritten" }],
      ] as const) {
        const reply = await c.call(method, params);
        expect(reply.error, `${method} ${key}`).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
      }
    }
    expect(await c.result("state.keys")).toEqual(["plain"]);
    expect(await c.result("state.snapshot")).toEqual({ plain: "unscoped" });
    expect(await c.result("state.get", { key: "secret", tenant_id: "alice" })).toBe("alice's");
  });

  it("another tenant sees none of alice's keys, and a tenant id cannot reach into her namespace", async () => {
    const c = await withAlice();
    expect(await c.result("state.get", { key: "secret", tenant_id: "bob" })).toBeNull();
    expect(await c.result("state.exists", { key: "secret", tenant_id: "bob" })).toBe(false);
    expect(await c.result("state.keys", { tenant_id: "bob" })).toEqual([]);
    expect(await c.result("state.snapshot", { tenant_id: "bob" })).toEqual({});
    for (const tenant_id of ["alice:x", "alice:", ":alice", "a/b", "x".repeat(129), "tenant:alice", " alice"]) {
      for (const method of ["state.get", "state.set", "state.exists", "state.keys", "state.snapshot"]) {
        const reply = await c.call(method, { key: "secret", value: "forged", tenant_id });
        expect(reply.error, `${method} as ${JSON.stringify(tenant_id)}`).toMatchObject({ code: -32602, message: expect.stringContaining("tenant_id") });
      }
    }
    // "alice:x" + "secret" would have been stored as alice's "x:secret".
    expect(await c.result("state.get", { key: "x:secret", tenant_id: "alice" })).toBe("alice's nested");
    expect(await c.result("state.keys", { tenant_id: "alice" })).toEqual(["secret", "x:secret"]);
  });

  it("a proposal can neither name a tenant key anywhere nor compute a state key at run time", async () => {
    const c = await withAlice();
    c.handle("tools.execute", () => ({ result: "tenant:alice:secret" }));
    await c.result("tools.register", [{ name: "key_maker" }]);
    const key = "tenant:alice:secret";
    const attempts: Record<string, object[]> = {
      "state_write key": [{ id: "w", type: "state_write", parameters: { key, value: "pwned" } }],
      "state_read key": [{ id: "r", type: "state_read", parameters: { key } }],
      "state_read keys": [{ id: "r", type: "state_read", parameters: { keys: ["plain", key] } }],
      state_dependencies: [{ id: "r", type: "state_read", parameters: { key: "plain" }, state_dependencies: [key] }],
      read_set: [{ id: "r", type: "state_read", parameters: { key: "plain" }, read_set: [key] }],
      write_set: [{ id: "w", type: "state_write", parameters: { key: "plain", value: 1 }, write_set: [key] }],
      expected_effects: [{ id: "t", type: "tool_call", tool: "key_maker", expected_effects: { [key]: "pwned" } }],
      preconditions: [{ id: "r", type: "state_read", parameters: { key: "plain" }, preconditions: [{ key, operator: "exists", value: null }] }],
      assumptions: [{ id: "r", type: "state_read", parameters: { key: "plain" }, assumptions: [{ key, version: 1 }] }],
      "computed write key": [
        { id: "k", type: "tool_call", tool: "key_maker" },
        { id: "w", type: "state_write", parameters: { key: "$k.output", value: "pwned" }, dependencies: ["k"] },
      ],
      "computed read key": [
        { id: "k", type: "tool_call", tool: "key_maker" },
        { id: "r", type: "state_read", parameters: { keys: ["$k.output"] }, dependencies: ["k"] },
      ],
    };
    for (const [path, actions] of Object.entries(attempts)) {
      const reply = await c.call("proposal.submit", { proposal: { actions } });
      expect(reply.error, path).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
    }
    expect(c.frames.some((f) => f.method === "tools.execute")).toBe(false);
    expect(await c.result("state.get", { key: "secret", tenant_id: "alice" })).toBe("alice's");
    // Ordinary proposals still run.
    const ok = await c.result("proposal.submit", { proposal: { actions: [{ id: "w", type: "state_write", parameters: { key: "mine", value: 1 } }] } });
    expect(ok.results[0].status).toBe("succeeded");
  });
});
