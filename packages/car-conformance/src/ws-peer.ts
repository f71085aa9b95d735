/**
 * A minimal JSON-RPC 2.0 peer over one WebSocket: requests matched to
 * responses by id, and handlers for the server's own requests and
 * notifications (`tools.execute`, `tools.cancel`). Just enough to drive a
 * CAR server as a client; nothing CAR-specific lives here.
 */
import WebSocket from "ws";

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC error response, as a throwable. */
export class RpcCallError extends Error {
  constructor(
    readonly method: string,
    readonly error: RpcError,
  ) {
    super(`${method}: ${error.code} ${error.message}`);
  }
}

/** What a request handler answers: a result, an error, raw JSON text for the result, or nothing at all. */
export type RequestAnswer = { result: unknown } | { error: RpcError } | { resultJsonText: string } | undefined;

type Pending = { method: string; resolve: (v: unknown) => void; reject: (e: Error) => void };

export class WsPeer {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, Pending>();
  readonly #requestHandlers = new Map<string, (params: unknown) => Promise<RequestAnswer>>();
  readonly #notificationHandlers = new Map<string, (params: unknown) => void>();
  #seq = 0;
  #closed: Error | undefined;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on("message", (data) => this.#onMessage(data.toString()));
    socket.on("close", (code, reason) => this.#failAll(new Error(`the connection closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ""})`)));
    socket.on("error", (err) => this.#failAll(err));
  }

  static connect(url: string, timeoutMs = 10_000): Promise<WsPeer> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { handshakeTimeout: timeoutMs, maxPayload: 64 * 1024 * 1024 });
      socket.once("open", () => resolve(new WsPeer(socket)));
      socket.once("error", reject);
    });
  }

  onRequest(method: string, handler: (params: unknown) => Promise<RequestAnswer>): void {
    this.#requestHandlers.set(method, handler);
  }

  onNotification(method: string, handler: (params: unknown) => void): void {
    this.#notificationHandlers.set(method, handler);
  }

  /** Sends a request; resolves with its result, rejects with `RpcCallError` on an error response. */
  call(method: string, params?: unknown): Promise<unknown> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    const id = ++this.#seq;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { method, resolve, reject });
      this.#socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }));
    });
  }

  close(): Promise<void> {
    if (this.#socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.#socket.once("close", () => resolve());
      this.#socket.close();
    });
  }

  #failAll(err: Error): void {
    this.#closed ??= err;
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }

  #onMessage(text: string): void {
    let frame: { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: RpcError };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return;
    }
    if (typeof frame.method === "string") {
      if (frame.id === undefined || frame.id === null) {
        this.#notificationHandlers.get(frame.method)?.(frame.params);
        return;
      }
      void this.#answer(frame.method, frame.id, frame.params);
      return;
    }
    const pending = typeof frame.id === "number" ? this.#pending.get(frame.id) : undefined;
    if (pending === undefined) return;
    this.#pending.delete(frame.id as number);
    if (frame.error !== undefined) pending.reject(new RpcCallError(pending.method, frame.error));
    else pending.resolve(frame.result);
  }

  async #answer(method: string, id: unknown, params: unknown): Promise<void> {
    const handler = this.#requestHandlers.get(method);
    let answer: RequestAnswer;
    try {
      answer = handler === undefined ? { error: { code: -32601, message: `unknown method: ${method}` } } : await handler(params);
    } catch (err) {
      answer = { error: { code: -32603, message: err instanceof Error ? err.message : String(err) } };
    }
    if (answer === undefined || this.#socket.readyState !== WebSocket.OPEN) return;
    const idText = JSON.stringify(id);
    if ("resultJsonText" in answer) this.#socket.send(`{"jsonrpc":"2.0","id":${idText},"result":${answer.resultJsonText}}`);
    else this.#socket.send(JSON.stringify({ jsonrpc: "2.0", id, ...answer }));
  }
}
