/**
 * The server tests' client: `@car/client`'s CarClient (the repository's one
 * JSON-RPC client) with what a protocol test needs beside it — every frame
 * received, in order; calls answered as response frames rather than thrown;
 * raw frames; server requests left unanswered unless the test handles them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import type WebSocket from "ws";
import { CarClient, CarRpcError, NO_ANSWER, ReplyError } from "@car/client";
import type { ServeIo } from "../src/serve-command.ts";
import { startServer, type RunningServer } from "../src/server.ts";

export interface ResponseFrame {
  jsonrpc: "2.0";
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface RequestFrame {
  jsonrpc: "2.0";
  id?: string | number;
  method: string;
  params?: any;
}

type Answer = { result: unknown } | { error: { code: number; message: string; data?: unknown } } | undefined;

/** A proposal whose first action waits on the client's `wait` tool: it is in flight until the test answers. */
export const slowProposal = {
  proposal: {
    id: "slow",
    actions: [
      { id: "a", type: "tool_call", tool: "wait" },
      { id: "b", type: "state_write", parameters: { key: "k", value: 1 }, dependencies: ["a"] },
    ],
  },
};

export class TestClient {
  private readonly watchers: { test: (frame: any) => boolean; resolve: (frame: any) => void }[] = [];
  /** Every frame received, in order. */
  readonly frames: any[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly client: CarClient) {
    this.closed = client.closed;
    client.onFrame((frame) => this.onFrame(frame));
  }

  /** The underlying socket (to terminate it, or to read its state). */
  get socket(): WebSocket {
    return this.client.socket;
  }

  static async connect(url: string, options?: WebSocket.ClientOptions): Promise<TestClient> {
    return new TestClient(await CarClient.open(url, { unhandledRequests: "ignore", ...(options === undefined ? {} : { ws: options }) }));
  }

  /** Connects and authenticates with `token` (skipped when undefined). */
  static async open(url: string, token: string | undefined): Promise<TestClient> {
    const client = await TestClient.connect(url);
    if (token !== undefined) {
      const auth = await client.call("session.auth", { token });
      if (auth.error !== undefined) throw new Error(`auth failed: ${auth.error.message}`);
    }
    return client;
  }

  /**
   * Calls and answers with the response frame: `{ result }` or `{ error }`.
   * A call the connection's end leaves unanswered stays pending, as on a raw
   * socket: the tests that close connections await `closed`, not their calls.
   */
  call(method: string, params?: unknown): Promise<ResponseFrame> {
    return this.client.request(method, params).then(
      (result): ResponseFrame => ({ jsonrpc: "2.0", result }),
      (err: unknown): ResponseFrame | Promise<ResponseFrame> => {
        if (err instanceof CarRpcError) return { jsonrpc: "2.0", error: err.toRpcError() };
        return new Promise<ResponseFrame>(() => {});
      },
    );
  }

  /** Calls and returns the result, failing the test on an error response. */
  async result(method: string, params?: unknown): Promise<any> {
    const reply = await this.call(method, params);
    if (reply.error !== undefined) throw new Error(`${method} failed: ${reply.error.code} ${reply.error.message}`);
    return reply.result;
  }

  send(frame: unknown): void {
    this.client.send(frame);
  }

  sendRaw(text: string): void {
    this.client.sendRaw(text);
  }

  /** Answers every server→client request for `method`; returning undefined leaves it unanswered. */
  handle(method: string, handler: (params: any, frame: RequestFrame) => Answer | Promise<Answer>): void {
    this.client.onRequest(method, async (params, ctx) => {
      const answer = await handler(params, { jsonrpc: "2.0", id: ctx.id, method, params });
      if (answer === undefined) return NO_ANSWER;
      if ("error" in answer) throw new ReplyError(answer.error.code, answer.error.message, answer.error.data as never);
      return answer.result as never;
    });
  }

  /** The next frame (already received or future) that satisfies `test`. */
  waitFor(test: (frame: any) => boolean): Promise<any> {
    const seen = this.frames.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.watchers.push({ test, resolve }));
  }

  notifications(method: string): any[] {
    return this.frames.filter((f) => f.method === method && f.id === undefined);
  }

  close(): Promise<unknown> {
    this.socket.close();
    return this.closed;
  }

  private onFrame(frame: any): void {
    this.frames.push(frame);
    for (const w of [...this.watchers]) {
      if (w.test(frame)) {
        this.watchers.splice(this.watchers.indexOf(w), 1);
        w.resolve(frame);
      }
    }
  }
}

/**
 * Test-file fixture: one server for the file (in a temporary CAR_HOME), a
 * `client()` that opens authenticated clients, closed after each test.
 */
export function useTestServer(prefix: string): {
  readonly server: RunningServer;
  readonly carHome: string;
  client(): Promise<TestClient>;
  track(client: TestClient): TestClient;
} {
  const state = { server: undefined as RunningServer | undefined, carHome: "" };
  const clients: TestClient[] = [];
  beforeAll(async () => {
    state.carHome = await mkdtemp(join(tmpdir(), prefix));
    state.server = await startServer({ port: 0, carHome: state.carHome });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await state.server?.close({ graceMs: 0 });
    await rm(state.carHome, { recursive: true, force: true });
  });
  return {
    get server() {
      return state.server!;
    },
    get carHome() {
      return state.carHome;
    },
    async client() {
      const c = await TestClient.open(state.server!.url, state.server!.token);
      clients.push(c);
      return c;
    },
    /** Closes a client the test opened itself after the test, like `client()`'s. */
    track(client: TestClient) {
      clients.push(client);
      return client;
    },
  };
}

/** A `car serve` console in memory: what it printed, and a way to send it a signal. */
export function recordingServeIo(carHome: string): ServeIo & { out: string[]; err: string[]; signal(name: NodeJS.Signals): void } {
  let handler: ((s: NodeJS.Signals) => void) | undefined;
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    env: { CAR_HOME: carHome },
    onSignal(h) {
      handler = h;
      return () => (handler = undefined);
    },
    signal: (name) => handler?.(name),
  };
}
