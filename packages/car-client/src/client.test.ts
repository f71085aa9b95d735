/**
 * CarClient over a real WebSocket, against a scripted JSON-RPC peer (a
 * `ws` server the test starts): ids, errors read through the one code table,
 * server requests and their cancellation, notifications, AbortSignal and
 * deadlines, and a connection that drops mid-call. (Against a real
 * `car serve`, the server's own tests use this client.)
 */
import { CarError } from "@car/ir";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { CarClient, CarRpcError, NO_ANSWER, RawResult, ReplyError } from "./index.ts";

interface Peer {
  url: string;
  /** Every frame the peer received, decoded. */
  received: any[];
  /** The same frames as the text that came. */
  raw: string[];
  socket(): Promise<WebSocket>;
  close(): Promise<void>;
}

const peers: Peer[] = [];
afterEach(async () => {
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

/** A peer that answers each request with `answer(frame)` (undefined: no answer). */
async function peer(answer: (frame: any, ws: WebSocket) => unknown = () => undefined): Promise<Peer> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((resolve) => wss.once("listening", resolve));
  const received: any[] = [];
  const raw: string[] = [];
  let resolveSocket: (ws: WebSocket) => void = () => {};
  const first = new Promise<WebSocket>((resolve) => (resolveSocket = resolve));
  wss.on("connection", (ws) => {
    resolveSocket(ws);
    ws.on("message", (data) => {
      raw.push(data.toString());
      const frame = JSON.parse(data.toString());
      received.push(frame);
      const reply = answer(frame, ws);
      if (reply !== undefined) ws.send(JSON.stringify(reply));
    });
  });
  const { port } = wss.address() as { port: number };
  const p: Peer = {
    url: `ws://127.0.0.1:${port}/`,
    received,
    raw,
    socket: () => first,
    close: () =>
      new Promise((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  };
  peers.push(p);
  return p;
}

const echo = (frame: any) =>
  frame.method !== undefined && frame.id !== undefined
    ? { jsonrpc: "2.0", id: frame.id, result: { method: frame.method, params: frame.params ?? null } }
    : undefined;

describe("CarClient", () => {
  it("authenticates, negotiates protocol 3 and matches answers to calls by id", async () => {
    const p = await peer((f) =>
      f.method === "server.handshake"
        ? {
            jsonrpc: "2.0",
            id: f.id,
            result: { protocol_version: 3, server_version: "x", client_protocol_version: 3, client_version: "c", negotiated_capabilities: [] },
          }
        : echo(f),
    );
    const client = await CarClient.connect(p.url, { token: "t0k", clientVersion: "test 1" });
    expect(p.received.slice(0, 2)).toMatchObject([
      { method: "session.auth", params: { token: "t0k" } },
      { method: "server.handshake", params: { protocol_version: 3, client_version: "test 1" } },
    ]);
    expect(client.handshake?.protocol_version).toBe(3);
    const [a, b] = await Promise.all([client.call("state.get", { key: "a" }), client.call("state.keys")]);
    expect(a).toEqual({ method: "state.get", params: { key: "a" } });
    expect(b).toEqual({ method: "state.keys", params: null });
    await client.close();
  });

  it("reads an error's CarError code from its data and number, never its message", async () => {
    const errors: Record<string, { code: number; message: string; data?: unknown }> = {
      a: { code: -32001, message: "approval denied (misleading prose)", data: { car_code: "unauthorized" } },
      b: { code: -32602, message: "auth required" },
      c: { code: -32601, message: "unknown method: x" },
      d: { code: -32015, message: "?" },
      e: { code: 7, message: "timeout" },
    };
    const p = await peer((f) => ({ jsonrpc: "2.0", id: f.id, error: errors[f.params.which] }));
    const client = await CarClient.connect(p.url, { handshake: false });
    const codes: Record<string, string> = {};
    for (const which of Object.keys(errors)) {
      const err = await client.request("any", { which }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CarRpcError);
      expect(err).toBeInstanceOf(CarError);
      expect((err as CarRpcError).rpcCode).toBe(errors[which]!.code);
      expect((err as CarRpcError).message).toBe(errors[which]!.message);
      codes[which] = (err as CarRpcError).code;
    }
    expect(codes).toEqual({ a: "unauthorized", b: "invalid_params", c: "not_found", d: "verification_failed", e: "internal" });
    await client.close();
  });

  it("rejects a cancelled call with `cancelled` and a call past its deadline with `timeout`, and drops the late answer", async () => {
    let late: (() => void) | undefined;
    const p = await peer((f, ws) => {
      late = () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: f.id, result: "late" }));
      return undefined;
    });
    const client = await CarClient.connect(p.url, { handshake: false });
    const controller = new AbortController();
    const call = client.call("state.get", { key: "k" }, { signal: controller.signal });
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: "cancelled" });
    await expect(client.call("state.keys", {}, { timeoutMs: 20 })).rejects.toMatchObject({ code: "timeout", message: "state.keys: no answer within 20 ms" });
    late?.();
    // The connection still works, and the late answer resolved nothing.
    const already = new AbortController();
    already.abort();
    await expect(client.request("x", {}, { signal: already.signal })).rejects.toMatchObject({ code: "cancelled" });
    await client.close();
  });

  it("rejects every waiting call with `cancelled` when the connection drops, and refuses new ones", async () => {
    const p = await peer();
    const client = await CarClient.connect(p.url, { handshake: false });
    const waiting = client.call("proposal.submit", { proposal: { id: "p", actions: [] } });
    (await p.socket()).terminate();
    await expect(waiting).rejects.toMatchObject({ code: "cancelled", message: expect.stringContaining("the connection closed") });
    await expect(client.call("state.keys")).rejects.toMatchObject({ code: "cancelled" });
  });

  it("answers server requests with handler results, ReplyErrors, CarErrors, raw JSON or nothing, and refuses unhandled ones", async () => {
    const p = await peer();
    const client = await CarClient.connect(p.url, { handshake: false });
    client.onRequest("tools.execute", async (params) => {
      switch (params.tool) {
        case "ok":
          return { echoed: params.params };
        case "reply":
          throw new ReplyError(-32000, "tool failed", { terminal: true });
        case "car":
          throw new CarError("timeout", "too slow");
        case "raw":
          return new RawResult("12345678901234567890");
        case "crash":
          throw new Error("boom");
        default:
          return NO_ANSWER;
      }
    });
    const ws = await p.socket();
    const ask = (id: number, method: string, tool: string) =>
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params: { tool, params: { x: id }, action_id: "a", request_id: `r${id}`, attempt: 1 } }));
    ask(1, "tools.execute", "ok");
    ask(2, "tools.execute", "reply");
    ask(3, "tools.execute", "car");
    ask(4, "tools.execute", "raw");
    ask(5, "tools.execute", "crash");
    ask(6, "tools.execute", "silent");
    ask(7, "multi.run_agent", "none");
    await expect.poll(() => p.received.length).toBe(6);
    const byId = Object.fromEntries(p.received.map((f) => [f.id, f]));
    expect(byId[1]).toEqual({ jsonrpc: "2.0", id: 1, result: { echoed: { x: 1 } } });
    expect(byId[2]).toEqual({ jsonrpc: "2.0", id: 2, error: { code: -32000, message: "tool failed", data: { terminal: true } } });
    expect(byId[3]).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32020, message: "too slow", data: { car_code: "timeout" } } });
    expect(p.raw).toContain('{"jsonrpc":"2.0","id":4,"result":12345678901234567890}');
    expect(byId[5]).toEqual({ jsonrpc: "2.0", id: 5, error: { code: -32603, message: "boom" } });
    expect(byId[6]).toBeUndefined();
    expect(byId[7]).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32601, message: "unknown method: multi.run_agent" } });
    await client.close();
  });

  it("aborts a handler's signal when the server sends tools.cancel for its request_id, and delivers the notification", async () => {
    const p = await peer();
    const client = await CarClient.connect(p.url, { handshake: false });
    const cancels: unknown[] = [];
    client.onNotification("tools.cancel", (params) => cancels.push(params.request_id));
    let aborted: unknown;
    client.onRequest("tools.execute", (_params, ctx) => {
      return new Promise((resolve) => {
        ctx.signal.addEventListener("abort", () => {
          aborted = ctx.signal.reason;
          resolve(NO_ANSWER);
        });
      });
    });
    const ws = await p.socket();
    ws.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: "cb-1",
        method: "tools.execute",
        params: { tool: "t", params: {}, action_id: "a", request_id: "cb-1", attempt: 1 },
      }),
    );
    ws.send(JSON.stringify({ jsonrpc: "2.0", method: "tools.cancel", params: { request_id: "cb-1", action_id: "a" } }));
    await expect.poll(() => aborted).toBeInstanceOf(CarError);
    expect((aborted as CarError).code).toBe("cancelled");
    expect(cancels).toEqual(["cb-1"]);
    await client.close();
  });

  it("connects as an agent with ?agent_id= and routes answers inside a batch", async () => {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => wss.once("listening", resolve));
    const seen: string[] = [];
    wss.on("connection", (ws, request) => {
      seen.push(request.url ?? "");
      ws.on("message", (data) => {
        const f = JSON.parse(data.toString());
        ws.send(JSON.stringify([{ jsonrpc: "2.0", id: f.id, result: "in a batch" }]));
      });
    });
    const { port } = wss.address() as { port: number };
    const client = await CarClient.connect(`ws://127.0.0.1:${port}/`, { agentId: "bot 1", handshake: false });
    expect(await client.request("anything")).toBe("in a batch");
    expect(seen).toEqual(["/?agent_id=bot+1"]);
    await client.close();
    await new Promise((resolve) => wss.close(resolve));
  });

  it("never throws on arbitrary frames from the server: calls still get their answers", async () => {
    const p = await peer();
    const client = await CarClient.connect(p.url, { handshake: false });
    const ws = await p.socket();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (junk) => {
        ws.send(JSON.stringify(junk));
        const before = p.received.filter((f) => f.method === "ping").length;
        const call = client.request("ping");
        await expect.poll(() => p.received.filter((f) => f.method === "ping").length).toBe(before + 1);
        const last = p.received.filter((f) => f.method === "ping")[before];
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: last.id, result: "pong" }));
        expect(await call).toBe("pong");
      }),
      { numRuns: 50 },
    );
    await client.close();
  });
});
