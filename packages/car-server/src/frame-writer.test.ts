import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { FrameWriter } from "./frame-writer.ts";

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    await new Promise((r) => s.close(r));
  }
});

/** A real server socket wrapped in a FrameWriter, and a client collecting every message it receives. */
async function pair(pieceChars: number): Promise<{ writer: FrameWriter; server: WebSocket; received: string[]; arrived(n: number): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0 });
  servers.push(wss);
  const accepted = new Promise<WebSocket>((r) => wss.once("connection", r));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { maxPayload: 256 * 1024 * 1024 });
  const received: string[] = [];
  const waiters: { n: number; resolve(): void }[] = [];
  client.on("message", (data) => {
    received.push(String(data));
    for (const w of waiters) if (received.length >= w.n) w.resolve();
  });
  await new Promise((r) => client.once("open", r));
  const server = await accepted;
  const arrived = (n: number) =>
    new Promise<void>((resolve) => {
      if (received.length >= n) resolve();
      else waiters.push({ n, resolve });
    });
  return { writer: new FrameWriter(server, pieceChars, 2 * pieceChars), server, received, arrived };
}

describe("a connection's frame writer", () => {
  it("sends a large frame as one message, a piece per turn, and the frames after it in order", async () => {
    const { writer, received, arrived } = await pair(64 * 1024);
    const answer = "a😀\u0000é".repeat(1 << 20);
    const big = { jsonrpc: "2.0", id: "agent-1", method: "multi.run_agent", params: { task: answer, inputs: [{ name: "item 1", answer }] } };
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const bigSent = writer.write(big);
    // Written while the large frame is still going out: it waits behind it.
    const smallSent = writer.write({ jsonrpc: "2.0", id: 2, result: "small" });
    await bigSent;
    await smallSent;
    clearInterval(ticking);
    await arrived(2);
    expect(received).toHaveLength(2);
    expect(JSON.parse(received[0]!)).toEqual(big);
    expect(JSON.parse(received[1]!)).toEqual({ jsonrpc: "2.0", id: 2, result: "small" });
    // The loop ran timers between the pieces: the write did not hold it for the whole frame.
    expect(turns).toBeGreaterThan(10);
  });

  it("sends a small frame at once, serialised as JSON.stringify does", async () => {
    const { writer, received, arrived } = await pair(64 * 1024);
    const sent = writer.write({ jsonrpc: "2.0", id: 1, result: { ok: true } });
    await sent;
    await arrived(1);
    expect(received).toEqual([JSON.stringify({ jsonrpc: "2.0", id: 1, result: { ok: true } })]);
  });

  it("abandons a large frame when the socket closes while it is written, and drops what waits behind it", async () => {
    const { writer, server, received } = await pair(64 * 1024);
    const big = writer.write({ answer: "x".repeat(8 << 20) });
    const after = writer.write({ after: true });
    server.terminate();
    await big;
    await after;
    expect(received).toEqual([]);
    // A closed socket takes nothing more, and the writer does not throw.
    await writer.write({ late: true });
  });

  it("fails a queued frame that cannot be serialised, and everything after it, so its owner can close the socket", async () => {
    const { writer } = await pair(64 * 1024);
    const bad = writer.write({ answer: "x".repeat(1 << 20), n: 1n });
    const behind = writer.write({ after: true });
    await expect(bad).rejects.toThrow(/BigInt/);
    await expect(behind).rejects.toThrow(/BigInt/);
    await expect(writer.write({ later: true })).rejects.toThrow(/BigInt/);
  });
});
