/**
 * `CarClient`: one WebSocket connection to `car serve` (or any server of
 * the protocol). It matches answers to calls by id, answers the server's
 * own requests (`tools.execute`, `multi.run_agent`, …) with the handlers
 * registered for them, delivers notifications, and gives every call a
 * signal and a deadline. Calls are typed by `@car/client/protocol`.
 */
import { CarError, type JsonValue } from "@car/ir";
import WebSocket, { type ClientOptions } from "ws";
import { PROTOCOL_VERSION } from "./protocol/index.ts";
import type {
  NotificationName,
  NotificationParams,
  RequestName,
  RequestParams,
  RequestResult,
  ResultOf,
  TypedCall,
  UnionToIntersection,
} from "./protocol/types.ts";
import { CarRpcError, replyFor, type RpcErrorObject } from "./rpc-error.ts";

export type RpcId = string | number;

export interface HandshakeOptions {
  required_capabilities?: string[];
  optional_capabilities?: string[];
}

export interface ConnectOptions {
  /** Sent with `session.auth` as the first call; none when absent (a server with `--no-auth`). */
  token?: string | undefined;
  /** Connect as this agent (`?agent_id=`): the connection acts for it, with the agent role. */
  agentId?: string | undefined;
  /** `server.handshake` after auth (default true): `true` asks for nothing optional, an object names capabilities. */
  handshake?: boolean | HandshakeOptions;
  /** Reported in the handshake. */
  clientVersion?: string;
  /** Deadline for every call that sets none itself (default: none — a proposal may run long). */
  timeoutMs?: number;
  /** Deadline for opening the socket (default 10 s). */
  connectTimeoutMs?: number;
  /** A server request with no handler is refused with -32601 (default) or left unanswered (`ignore`). */
  unhandledRequests?: "refuse" | "ignore";
  /** Passed to `ws` (e.g. `maxPayload`, `headers`). */
  ws?: ClientOptions;
}

export interface CallOptions {
  /** Aborting stops waiting: the call rejects with `cancelled` and a late answer is dropped. */
  signal?: AbortSignal;
  /** Rejects with `timeout` after this long without an answer. */
  timeoutMs?: number;
}

/** What a handler of a server request is told beside the params. */
export interface RequestContext {
  id: RpcId;
  method: string;
  /** Aborts when the server cancels this call (`tools.cancel` naming its request_id) or the connection closes. */
  signal: AbortSignal;
}

/** A handler's answer sent as this JSON text verbatim (e.g. a number JSON cannot round-trip through `JSON.parse`). */
export class RawResult {
  constructor(readonly jsonText: string) {}
}

/** Returned by a handler that deliberately leaves the request unanswered. */
export const NO_ANSWER: unique symbol = Symbol("no answer");

export type RequestHandler<P = unknown, R = unknown> = (
  params: P,
  ctx: RequestContext,
) => R | RawResult | typeof NO_ANSWER | Promise<R | RawResult | typeof NO_ANSWER>;
export type NotificationHandler<P = unknown> = (params: P) => void;

/** `onRequest` typed per server request (one overload each), with an untyped form for any other name. */
type OnRequest = UnionToIntersection<
  { [M in RequestName]: (method: M, handler: RequestHandler<RequestParams<M>, RequestResult<M> | JsonValue>) => void }[RequestName]
> &
  ((method: string, handler: RequestHandler) => void);

/** `onNotification` typed per notification, with an untyped form for any other name. */
type OnNotification = UnionToIntersection<
  { [M in NotificationName]: (method: M, handler: NotificationHandler<NotificationParams<M>>) => void }[NotificationName]
> &
  ((method: string, handler: NotificationHandler) => void);

interface Pending {
  method: string;
  resolve: (value: JsonValue) => void;
  reject: (error: Error) => void;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export class CarClient {
  /** The `server.handshake` answer, once negotiated. */
  handshake: ResultOf<"server.handshake"> | undefined;
  /** Resolves when the socket closes, with its close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>;

  readonly #pending = new Map<RpcId, Pending>();
  readonly #requestHandlers = new Map<string, RequestHandler>();
  readonly #notificationHandlers = new Map<string, NotificationHandler[]>();
  readonly #frameListeners: ((frame: unknown) => void)[] = [];
  /** Server requests being handled, by their `request_id`, so `tools.cancel` can abort them. */
  readonly #serving = new Map<string, AbortController>();
  readonly #options: ConnectOptions;
  #seq = 0;
  #closedError: CarError | undefined;

  private constructor(
    /** The underlying `ws` socket, for what the protocol does not cover (pings, raw frames in tests). */
    readonly socket: WebSocket,
    options: ConnectOptions,
  ) {
    this.#options = options;
    this.closed = new Promise((resolve) => {
      socket.on("close", (code, reason) => {
        const text = reason.toString();
        this.#fail(new CarError("cancelled", `the connection closed (${code}${text === "" ? "" : ` ${text}`})`));
        resolve({ code, reason: text });
      });
    });
    socket.on("error", (err) => this.#fail(new CarError("cancelled", `the connection failed: ${err.message}`, {}, { cause: err })));
    socket.on("message", (data) => this.#onMessage(data.toString()));
  }

  /** Opens the socket only: no auth, no handshake. Rejects with the transport's own error when it cannot connect. */
  static open(url: string, options: ConnectOptions = {}): Promise<CarClient> {
    const target = options.agentId === undefined ? url : withAgentId(url, options.agentId);
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(target, { handshakeTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, ...options.ws });
      const onError = (err: Error): void => reject(err);
      socket.once("error", onError);
      socket.once("open", () => {
        socket.off("error", onError);
        resolve(new CarClient(socket, options));
      });
    });
  }

  /** Connects, authenticates with the token (when given) and negotiates the protocol (unless `handshake: false`). */
  static async connect(url: string, options: ConnectOptions = {}): Promise<CarClient> {
    const client = await CarClient.open(url, options);
    try {
      if (options.token !== undefined) await client.request("session.auth", { token: options.token });
      if (options.handshake !== false) {
        const asked = typeof options.handshake === "object" ? options.handshake : {};
        client.handshake = (await client.request("server.handshake", {
          protocol_version: PROTOCOL_VERSION,
          client_version: options.clientVersion ?? "@car/client",
          ...asked,
        })) as unknown as ResultOf<"server.handshake">;
      }
    } catch (err) {
      client.socket.terminate();
      throw err;
    }
    return client;
  }

  /** Calls a method of the protocol; resolves with its typed result, rejects with a `CarRpcError` for an error answer. */
  readonly call: TypedCall<CallOptions> = ((method: string, params?: unknown, options?: CallOptions) =>
    this.request(method, params, options)) as unknown as TypedCall<CallOptions>;

  /** Answers every server request for `method` with the handler's result; a thrown `ReplyError` or `CarError` answers with that error. */
  readonly onRequest: OnRequest = ((method: string, handler: RequestHandler) => {
    this.#requestHandlers.set(method, handler);
  }) as OnRequest;

  /** Calls the handler for every notification of `method` (handlers add up). */
  readonly onNotification: OnNotification = ((method: string, handler: NotificationHandler) => {
    const list = this.#notificationHandlers.get(method) ?? [];
    list.push(handler);
    this.#notificationHandlers.set(method, list);
  }) as OnNotification;

  /** Calls any method by name, untyped (a method this client's protocol does not declare, or a raw test call). */
  request(method: string, params?: unknown, options: CallOptions = {}): Promise<JsonValue> {
    if (this.#closedError !== undefined) return Promise.reject(this.#closedError);
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(cancelledBy(method, signal));
    const id = ++this.#seq;
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs;
    return new Promise<JsonValue>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => settle(() => reject(cancelledBy(method, signal!)));
      const settle = (done: () => void): void => {
        this.#pending.delete(id);
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        done();
      };
      this.#pending.set(id, {
        method,
        resolve: (value) => settle(() => resolve(value)),
        reject: (error) => settle(() => reject(error)),
      });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => settle(() => reject(new CarError("timeout", `${method}: no answer within ${timeoutMs} ms`))), timeoutMs);
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    });
  }

  /** Sends a notification (no answer expected). */
  notify(method: string, params?: unknown): void {
    this.send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  /** Sees every frame received (a message or a batch), decoded, before it is handled. */
  onFrame(listener: (frame: unknown) => void): void {
    this.#frameListeners.push(listener);
  }

  /** Sends one frame as JSON. */
  send(frame: unknown): void {
    this.sendRaw(JSON.stringify(frame));
  }

  /** Sends text as it is (a frame the client would never build, in a test). */
  sendRaw(text: string): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(text);
  }

  /** Closes the connection; resolves once it is closed. Calls still waiting reject with `cancelled`. */
  async close(): Promise<void> {
    if (this.socket.readyState !== WebSocket.CLOSED) this.socket.close();
    await this.closed;
  }

  #fail(error: CarError): void {
    this.#closedError ??= error;
    for (const pending of [...this.#pending.values()]) pending.reject(error);
    for (const controller of this.#serving.values()) controller.abort(error);
  }

  #onMessage(text: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return; // not JSON: nothing to route
    }
    for (const listener of this.#frameListeners) listener(frame);
    for (const message of Array.isArray(frame) ? frame : [frame]) this.#route(message);
  }

  #route(message: unknown): void {
    if (message === null || typeof message !== "object") return;
    const m = message as { id?: RpcId | null; method?: unknown; params?: unknown; result?: JsonValue; error?: RpcErrorObject };
    if (typeof m.method === "string") {
      if (m.id === undefined || m.id === null) this.#onNotification(m.method, m.params);
      else void this.#answer(m.id, m.method, m.params);
      return;
    }
    if (m.id === undefined || m.id === null) return;
    const pending = this.#pending.get(m.id);
    if (pending === undefined) return;
    if (m.error !== undefined) pending.reject(new CarRpcError(pending.method, m.error));
    else pending.resolve(m.result ?? null);
  }

  #onNotification(method: string, params: unknown): void {
    if (method === "tools.cancel") {
      const requestId = (params as { request_id?: unknown } | null)?.request_id;
      if (typeof requestId === "string") this.#serving.get(requestId)?.abort(new CarError("cancelled", "the server cancelled the call"));
    }
    for (const handler of this.#notificationHandlers.get(method) ?? []) handler(params);
  }

  async #answer(id: RpcId, method: string, params: unknown): Promise<void> {
    const handler = this.#requestHandlers.get(method);
    if (handler === undefined) {
      if (this.#options.unhandledRequests !== "ignore") this.send({ jsonrpc: "2.0", id, error: { code: -32601, message: `unknown method: ${method}` } });
      return;
    }
    const requestId = (params as { request_id?: unknown } | null)?.request_id;
    const controller = new AbortController();
    if (this.#closedError !== undefined) controller.abort(this.#closedError);
    if (typeof requestId === "string") this.#serving.set(requestId, controller);
    let answer: unknown;
    try {
      answer = await handler(params, { id, method, signal: controller.signal });
    } catch (err) {
      this.send({ jsonrpc: "2.0", id, error: replyFor(err) });
      return;
    } finally {
      if (typeof requestId === "string" && this.#serving.get(requestId) === controller) this.#serving.delete(requestId);
    }
    if (answer === NO_ANSWER) return;
    if (answer instanceof RawResult) this.sendRaw(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${answer.jsonText}}`);
    else this.send({ jsonrpc: "2.0", id, result: answer === undefined ? null : answer });
  }
}

function cancelledBy(method: string, signal: AbortSignal): CarError {
  const reason = signal.reason;
  if (reason instanceof CarError) return reason;
  return new CarError("cancelled", `${method}: cancelled${reason instanceof Error ? ` (${reason.message})` : ""}`, {}, { cause: reason });
}

function withAgentId(url: string, agentId: string): string {
  const u = new URL(url);
  u.searchParams.set("agent_id", agentId);
  return u.toString();
}
