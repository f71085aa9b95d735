import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
const servers: RunningServer[] = [];
const clients: TestClient[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-protocol-"));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close({ graceMs: 0 })));
});
afterAll(async () => {
  await rm(carHome, { recursive: true, force: true });
});

async function server(options: Parameters<typeof startServer>[0] = {}): Promise<RunningServer> {
  const s = await startServer({ port: 0, carHome, ...options });
  servers.push(s);
  return s;
}

async function client(s: RunningServer, authenticate = true): Promise<TestClient> {
  const c = authenticate ? await TestClient.open(s.url, s.token) : await TestClient.connect(s.url);
  clients.push(c);
  return c;
}

describe("auth", () => {
  it("writes a 43-character token into CAR_HOME with mode 0600 and removes it at shutdown", async () => {
    const s = await startServer({ port: 0, carHome });
    expect(s.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.tokenFile).toBe(join(carHome, "auth-token"));
    expect((await readFile(s.tokenFile!, "utf8")).trim()).toBe(s.token);
    expect((await stat(s.tokenFile!)).mode & 0o777).toBe(0o600);
    await s.close();
    await expect(stat(join(carHome, "auth-token"))).rejects.toThrow();
  });

  it("refuses a call before session.auth with -32001 and closes the connection", async () => {
    const s = await server();
    const c = await client(s, false);
    const reply = await c.call("server.handshake", { protocol_version: 3 });
    expect(reply.error?.code).toBe(-32001);
    expect(reply.error?.message).toMatch(/^auth required/);
    const closed = await c.closed;
    expect(closed.code).toBe(1008);
  });

  it("rejects a wrong token, leaves the session unauthenticated, and closes on the next call", async () => {
    const s = await server();
    const c = await client(s, false);
    const wrong = await c.call("session.auth", { token: "x".repeat(43) });
    expect(wrong.error).toMatchObject({ code: -32603, message: "auth failed: token mismatch" });
    const next = await c.call("server.handshake", { protocol_version: 3 });
    expect(next.error?.code).toBe(-32001);
    await c.closed;
  });

  it("admits the right token, then the handshake negotiates", async () => {
    const s = await server();
    const c = await client(s, false);
    expect(await c.result("session.auth", { token: s.token })).toEqual({ ok: true, auth_enabled: true });
    const hs = await c.result("server.handshake", { protocol_version: 3, client_version: "test" });
    expect(hs).toMatchObject({ protocol_version: 3, client_protocol_version: 3, client_version: "test", negotiated_capabilities: [] });
  });

  it("uses a supplied token and accepts any token with auth off", async () => {
    const fixed = await server({ token: "my-secret-token" });
    const c = await client(fixed, false);
    expect((await c.call("session.auth", { token: "my-secret-token" })).result).toEqual({ ok: true, auth_enabled: true });

    const open = await server({ auth: false });
    expect(open.token).toBeUndefined();
    const d = await client(open, false);
    expect(await d.result("server.handshake", { protocol_version: 3 })).toMatchObject({ protocol_version: 3 });
    expect(await d.result("session.auth", { token: "anything" })).toEqual({ ok: true, auth_enabled: false });
  });

  it("refuses to turn auth off on a non-loopback host", async () => {
    await expect(startServer({ port: 0, host: "0.0.0.0", auth: false, carHome })).rejects.toMatchObject({ code: "invalid_params" });
  });
});

describe("handshake", () => {
  it("refuses a missing or different protocol version with -32006 and a missing required capability with -32008", async () => {
    const s = await server();
    const c = await client(s);
    expect((await c.call("server.handshake", {})).error?.code).toBe(-32006);
    expect((await c.call("server.handshake", { protocol_version: 2 })).error?.code).toBe(-32006);
    const caps = await c.call("server.handshake", { protocol_version: 3, required_capabilities: ["infer.model-identity.v1"] });
    expect(caps.error?.code).toBe(-32008);
    const ok = await c.result("server.handshake", { protocol_version: 3, optional_capabilities: ["feedback.v1"] });
    expect(ok.negotiated_capabilities).toEqual([]);
  });
});

describe("malformed frames", () => {
  it("answers each kind of malformed frame with its JSON-RPC error and keeps the connection up", async () => {
    const s = await server();
    const c = await client(s);

    c.sendRaw("{not json");
    expect((await c.waitFor((f) => f.error?.code === -32700)).id).toBeNull();

    c.send({ jsonrpc: "1.0", id: 7, method: "server.handshake" });
    expect(await c.waitFor((f) => f.id === 7)).toMatchObject({ error: { code: -32600 } });

    c.send({ jsonrpc: "2.0", id: 8, method: 42 });
    expect(await c.waitFor((f) => f.id === 8)).toMatchObject({ error: { code: -32600 } });

    c.send({ jsonrpc: "2.0", id: 9, method: "server.handshake", params: "nope" });
    expect(await c.waitFor((f) => f.id === 9)).toMatchObject({ error: { code: -32600 } });

    c.sendRaw("42");
    await c.waitFor((f) => f.id === null && f.error?.code === -32600 && /object/.test(f.error.message));

    c.sendRaw("[]");
    await c.waitFor((f) => f.id === null && /empty batch/.test(f.error?.message ?? ""));

    const unknown = await c.call("no.such.method", {});
    expect(unknown.error).toMatchObject({ code: -32601, message: "unknown method: no.such.method" });

    const badParams = await c.call("server.handshake", { protocol_version: 3, required_capabilities: "x" });
    expect(badParams.error?.code).toBe(-32602);
    expect(badParams.error?.message).toMatch(/required_capabilities/);

    // Still alive and serving.
    expect(await c.result("server.handshake", { protocol_version: 3 })).toMatchObject({ protocol_version: 3 });
  });

  it("answers a batch with one array, skipping notifications", async () => {
    const s = await server();
    const c = await client(s);
    c.send([
      { jsonrpc: "2.0", id: "a", method: "server.handshake", params: { protocol_version: 3 } },
      { jsonrpc: "2.0", method: "server.handshake", params: { protocol_version: 3 } },
      { jsonrpc: "2.0", id: "b", method: "nope" },
      { foo: 1 },
    ]);
    const batch = await c.waitFor((f) => Array.isArray(f));
    expect(batch).toHaveLength(3);
    expect(batch[0]).toMatchObject({ id: "a", result: { protocol_version: 3 } });
    expect(batch[1]).toMatchObject({ id: "b", error: { code: -32601 } });
    expect(batch[2]).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it("drops a response whose id matches no request of ours without answering", async () => {
    const s = await server();
    const c = await client(s);
    c.send({ jsonrpc: "2.0", id: "cb-999", result: { stale: true } });
    expect(await c.result("server.handshake", { protocol_version: 3 })).toMatchObject({ protocol_version: 3 });
    expect(c.frames.filter((f) => f.id === "cb-999")).toEqual([]);
  });
});

describe("liveness", () => {
  it("drops a peer that stops answering pings and keeps one that answers", async () => {
    const s = await server({ pingIntervalMs: 20 });
    const healthy = await client(s);
    const silent = await TestClient.connect(s.url, { autoPong: false });
    clients.push(silent);
    silent.send({ jsonrpc: "2.0", id: 1, method: "session.auth", params: { token: s.token } });
    await silent.waitFor((f) => f.id === 1);
    expect((await silent.closed).code).toBe(1006);
    expect(await healthy.result("state.keys")).toEqual([]);
  });
});

describe("listener", () => {
  it("answers a plain HTTP request with 426 Upgrade Required", async () => {
    const s = await server();
    const res = await fetch(`http://127.0.0.1:${s.port}/`);
    expect(res.status).toBe(426);
    await res.text();
  });
});
