/**
 * `@car/engine/compat`'s daemon surface (the original binding's
 * `daemonCall`, `registerDaemonHandler`, `HostClient`, `DaemonRpcError`,
 * `protocolVersion`) against a real `car serve`, through @car/client: the
 * token is found the way the original found it, from CAR_HOME's token file.
 */
import { CarRuntime, DaemonRpcError, HostClient, protocolVersion } from "@car/engine/compat";
import { afterEach, describe, expect, it } from "vitest";
import { useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-compat-daemon-");
const runtimes: CarRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

function runtime(env: Record<string, string> = {}): CarRuntime {
  const rt = new CarRuntime({ daemonUrl: fx.server.url, env: { CAR_HOME: fx.carHome, ...env } });
  runtimes.push(rt);
  return rt;
}

describe("the compat daemon surface", () => {
  it("calls the daemon by name with JSON strings, the token read from CAR_HOME's token file", async () => {
    const rt = runtime();
    expect(protocolVersion()).toBe(3);
    expect(await rt.daemonCall("state.set", JSON.stringify({ key: "k", value: { n: 1 } }))).toBe('"ok"');
    expect(JSON.parse(await rt.daemonCall("state.get", '{"key":"k"}'))).toEqual({ n: 1 });
    const schema = JSON.parse(await rt.serverSchema());
    expect(schema).toMatchObject({ digest_algorithm: "sha256", schema: { protocol_version: 3 } });
  });

  it("rejects an error answer as a DaemonRpcError with the JSON-RPC number, and a wrong token at connect", async () => {
    const rt = runtime();
    const err = await rt.daemonCall("state.get", "{}").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DaemonRpcError);
    expect(err).toMatchObject({ code: -32602, carCode: "invalid_params", message: "invalid params: key is required", data: { car_code: "invalid_params" } });
    await expect(rt.daemonCall("state.get", "{not json")).rejects.toMatchObject({ code: "invalid_params" });
    const wrong = runtime({ CAR_AUTH_TOKEN: "not-the-token" });
    await expect(wrong.daemonCall("state.keys", "{}")).rejects.toMatchObject({ code: -32603, message: "auth failed: token mismatch" });
  });

  it("answers tools.execute through registerDaemonHandler while a proposal runs on the daemon", async () => {
    const rt = runtime();
    const calls: unknown[] = [];
    rt.registerDaemonHandler("tools.execute", async (paramsJson) => {
      const call = JSON.parse(paramsJson);
      calls.push(call.params);
      return JSON.stringify({ echoed: call.params.text });
    });
    await rt.daemonCall("tools.register", JSON.stringify([{ name: "echo" }]));
    const result = JSON.parse(
      await rt.daemonCall(
        "proposal.submit",
        JSON.stringify({ proposal: { id: "p", actions: [{ id: "a", type: "tool_call", tool: "echo", parameters: { text: "hi" } }] } }),
      ),
    );
    expect(result.results[0]).toMatchObject({ action_id: "a", status: "succeeded", output: { echoed: "hi" } });
    expect(calls).toEqual([{ text: "hi" }]);
  });

  it("replans on the daemon, as setReplanConfig's refusal says: replan.set_config with planner.propose answered by registerDaemonHandler", async () => {
    const rt = runtime();
    const asks: { failed_proposal_id: string; failures: { tool: string }[] }[] = [];
    rt.registerDaemonHandler("tools.execute", async (paramsJson) => {
      const call = JSON.parse(paramsJson);
      return JSON.stringify(call.tool === "flaky" ? { error: "flaky is down" } : { ok: call.tool });
    });
    rt.registerDaemonHandler("planner.propose", async (paramsJson) => {
      asks.push(JSON.parse(paramsJson));
      return JSON.stringify({ id: "plan-b", actions: [{ id: "s", type: "tool_call", tool: "steady", parameters: {} }] });
    });
    expect(() => rt.setReplanConfig(1)).toThrow(/registerDaemonHandler\('planner\.propose'/);
    await rt.daemonCall("tools.register", JSON.stringify([{ name: "flaky" }, { name: "steady" }]));
    await rt.daemonCall("replan.set_config", JSON.stringify({ max_replans: 1 }));
    const plan = { id: "plan-a", actions: [{ id: "f", type: "tool_call", tool: "flaky", parameters: {} }] };
    const result = JSON.parse(await rt.daemonCall("proposal.submit", JSON.stringify({ proposal: plan })));
    expect(result.proposal_id).toBe("plan-b");
    expect(result.results).toMatchObject([{ action_id: "s", status: "succeeded" }]);
    expect(asks).toMatchObject([{ failed_proposal_id: "plan-a", failures: [{ tool: "flaky" }] }]);
  });

  it("offers the operator methods on HostClient, under the original's generated names", async () => {
    const host = new HostClient(runtime());
    const approved = JSON.parse(await host.permissionApprove(JSON.stringify({ fingerprint: "f".repeat(64), required_tier: "full_access" })));
    expect(approved).toMatchObject({ fingerprint: "f".repeat(64) });
    const rejected = JSON.parse(await host.permissionReject(JSON.stringify({ fingerprint: "e".repeat(64), required_tier: "full_access", agent_id: "bot" })));
    expect(rejected).toMatchObject({ fingerprint: "e".repeat(64) });
    expect(typeof (host as unknown as Record<string, unknown>)["stateGet"]).toBe("undefined");
    // node-api.md lists permissionSetTier on HostClient too, though the method is the agent's.
    expect(JSON.parse(await host.permissionSetTier(JSON.stringify({ tier: "read_only" })))).toEqual({ granted_tier: "read_only" });
  });
});
