/**
 * One WebSocket connection: decodes frames, enforces the auth gate, routes
 * responses to our own server→client requests, and dispatches requests to the
 * method table. Requests run concurrently (a `proposal.submit` waits on
 * `tools.execute` answers arriving on this same socket), and a malformed
 * frame is answered with a JSON-RPC error without closing the connection.
 */
import { CarError, getOwn, type JsonValue } from "@car/ir";
import type { RawData, WebSocket } from "ws";
import {
  classifyMessage,
  couldNestDeeperThan,
  errorFrame,
  type Incoming,
  MAX_FRAME_DEPTH,
  nestsDeeperThan,
  resultFrame,
  RPC_AUTH_REQUIRED,
  RPC_CAPABILITY_MISMATCH,
  RPC_HANDSHAKE_REQUIRED,
  RPC_INTERNAL_ERROR,
  RPC_INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND,
  RPC_PARSE_ERROR,
  RpcFault,
  toRpcError,
} from "./jsonrpc.ts";
import type { MethodContext, MethodSpec, MethodTable } from "./method.ts";
import { requireOperator, roleOf } from "./operator.ts";
import { tenantScope, UNSCOPED } from "./tenancy.ts";
import { HeldBytes } from "./held-bytes.ts";
import { optionalString, paramsObject, requireString } from "./params.ts";
import { checkParams } from "./params-schema.ts";
import { RpcPeer } from "./peer.ts";
import { FrameWriter } from "./frame-writer.ts";
import { Session, type SessionOptions } from "./session.ts";
import { tokensMatch } from "./auth.ts";
import { DEFAULT_HANDLER_TIMEOUT_MS, handlerDeadlineMs, withDeadline } from "./deadline.ts";
import { silentServerLog, type MethodOutcome, type ServerLog } from "./server-log.ts";

/** The account of a method that declares nothing to hold: any take is refused. */
const HOLDS_NOTHING = new HeldBytes(0).account(0);

/** Close code sent after refusing an unauthenticated call (RFC 6455 "policy violation"). */
const CLOSE_POLICY_VIOLATION = 1008;
/** Close code for a frame the server could not write (RFC 6455 "internal error"). */
const CLOSE_INTERNAL_ERROR = 1011;
/** Close code for a server shutdown (RFC 6455 "going away"). */
const CLOSE_GOING_AWAY = 1001;
/** Requests of a batch admitted per turn of the event loop. */
const BATCH_SLICE = 64;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export interface ConnectionOptions extends SessionOptions {
  /** The token a client must present; `undefined` when auth is off (`--no-auth`). */
  token: string | undefined;
  /** How long a handler may run before its request is answered -32004 (`CAR_HANDLER_TIMEOUT`); `proposal.submit` derives its own. */
  handlerTimeoutMs?: number | undefined;
  /** The per-launch host token: `session.auth { host_token }` grants the host-management role. */
  hostToken?: string | undefined;
  methods: MethodTable;
  /** True once the server is shutting down: new requests are refused, answers still flow. */
  isDraining(): boolean;
  /** Where connection, auth and method records go (silent by default). */
  log?: ServerLog;
  /** This connection's number in the log. */
  connectionId?: number;
  /** The peer's address, for the log. */
  remoteAddress?: string | undefined;
}

/** A method name as logged: what the client sent when it looks like a method name, never arbitrary text. */
function loggedMethod(method: string): string {
  return /^[\w./-]{1,64}$/.test(method) ? method : "(invalid name)";
}

type Frame = object;

export class Connection {
  readonly session: Session;
  private authenticated: boolean;
  private authFailures = 0;
  /** Requests being handled now (each request of a batch counts). */
  private requestsInFlight = 0;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly aborter = new AbortController();
  private closed = false;
  private lastInbound = Date.now();
  private readonly openedAt = Date.now();
  private requests = 0;
  private readonly log: ServerLog;
  private readonly id: number;
  private readonly writer: FrameWriter;

  constructor(
    private readonly socket: WebSocket,
    private readonly options: ConnectionOptions,
  ) {
    this.authenticated = options.token === undefined;
    this.log = options.log ?? silentServerLog;
    this.id = options.connectionId ?? 0;
    this.writer = new FrameWriter(socket);
    this.log.connectionOpened(this.id, { remote: options.remoteAddress, agent: options.agentId !== undefined });
    const peer = new RpcPeer((frame) => void this.send(frame));
    this.session = new Session(peer, this.aborter.signal, options);
    if (options.agentId !== undefined) {
      const agent = options.agentId;
      options.oversight.host.emit("agent_registered", () => ({ agent_id: agent, session_id: this.session.id }));
    }
    socket.on("message", (data) => {
      this.lastInbound = Date.now();
      this.onFrame(data);
    });
    socket.on("pong", () => {
      this.lastInbound = Date.now();
    });
    socket.on("close", () => this.onClose());
    socket.on("error", () => this.onClose());
  }

  /** Settles when every request in flight on this connection has been answered. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Fires every in-flight handler's signal; each still sends its answer (e.g. a proposal's cancelled actions). */
  cancelInFlight(reason: string): void {
    this.aborter.abort(new CarError("cancelled", reason));
  }

  closeSocket(reason: string, code = CLOSE_GOING_AWAY): void {
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) {
      this.socket.close(code, reason.slice(0, 120));
    }
  }

  /**
   * One liveness tick: a peer silent (no frame, no pong) for longer than
   * `idleMs` is dropped, anyone else is pinged so a quiet but healthy client
   * answers with a pong and stays.
   */
  checkLiveness(now: number, idleMs: number): void {
    if (this.closed) return;
    if (now - this.lastInbound > idleMs) {
      this.socket.terminate();
      return;
    }
    if (this.socket.readyState === this.socket.OPEN) this.socket.ping();
  }

  /**
   * Resolves once the frame is handed to the socket whole (a large frame is
   * written a piece per turn: frame-writer.ts). A queued frame that cannot
   * be written closes the connection (1011), so no call waits on it forever.
   */
  private send(frame: Frame): Promise<void> {
    return this.writer.write(frame).catch(() => this.closeSocket("internal error: a frame could not be written", CLOSE_INTERNAL_ERROR));
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    const reason = new CarError("cancelled", "the connection closed");
    this.aborter.abort(reason);
    // A supervisor that leaves stops being sent intents; what it was shown stays parked (fail closed).
    const { supervision, host } = this.options.oversight;
    supervision.unsubscribe(this.session);
    host.unsubscribe(this.session);
    this.session.close(reason);
    if (this.options.agentId !== undefined) {
      const agent = this.options.agentId;
      host.emit("agent_unregistered", () => ({ agent_id: agent, session_id: this.session.id }));
    }
    this.log.connectionClosed(this.id, { requests: this.requests, lifetime_ms: Date.now() - this.openedAt });
  }

  private onFrame(data: RawData): void {
    const text = frameText(data);
    const bytes = frameBytes(data);
    let decoded: unknown;
    try {
      decoded = JSON.parse(text);
    } catch {
      void this.send(errorFrame(null, { code: RPC_PARSE_ERROR, message: "parse error: the frame is not valid JSON" }));
      return;
    }
    if (couldNestDeeperThan(text, MAX_FRAME_DEPTH) && nestsDeeperThan(decoded, MAX_FRAME_DEPTH)) {
      this.refuseDeepFrame(decoded, bytes);
      return;
    }
    if (Array.isArray(decoded)) {
      this.onBatch(decoded, bytes);
      return;
    }
    const work = this.handle(classifyMessage(decoded), bytes);
    this.track(work.then((frame) => (frame === undefined ? undefined : this.send(frame))));
  }

  /**
   * A frame nested past MAX_FRAME_DEPTH is not handled. A request gets the
   * refusal under its own id; an answer to one of our calls fails that call
   * (rather than leaving it to time out).
   */
  private refuseDeepFrame(decoded: unknown, bytes: number): void {
    const error = { code: RPC_INVALID_REQUEST, message: `invalid request: the frame nests more than ${MAX_FRAME_DEPTH} levels deep` };
    const message = Array.isArray(decoded) ? undefined : classifyMessage(decoded);
    if (message?.kind === "response") {
      this.session.peer.settle(message.id, undefined, error, bytes);
      return;
    }
    if (message?.kind === "notification") return;
    void this.send(errorFrame(message?.kind === "request" || message?.kind === "invalid" ? message.id : null, error));
  }

  /**
   * A JSON-RPC batch: every element is handled, and the replies go back as
   * one array. A batch over the limit is refused whole; one within it is
   * admitted in slices with a turn of the event loop between them, so a
   * long batch cannot hold another client's calls. An answer inside a batch
   * is charged the whole batch's size: the socket tells no finer, and a
   * byte budget must not undercount.
   */
  private onBatch(items: unknown[], bytes: number): void {
    if (items.length === 0) {
      void this.send(errorFrame(null, { code: RPC_INVALID_REQUEST, message: "invalid request: an empty batch" }));
      return;
    }
    const max = this.options.limits.maxBatchSize;
    if (items.length > max) {
      void this.send(
        errorFrame(null, { code: RPC_INVALID_REQUEST, message: `invalid request: a batch of ${items.length} requests; the limit is ${max} (--max-batch)` }),
      );
      return;
    }
    const work = (async () => {
      const pending: Promise<Frame | undefined>[] = [];
      for (let i = 0; i < items.length; i++) {
        if (i > 0 && i % BATCH_SLICE === 0) await yieldToEventLoop();
        pending.push(this.handle(classifyMessage(items[i]), bytes));
      }
      const replies = (await Promise.all(pending)).filter((f): f is Frame => f !== undefined);
      if (replies.length > 0) await this.send(replies);
    })();
    this.track(work);
  }

  private track(work: Promise<unknown>): void {
    this.inFlight.add(work);
    // `then` rather than `finally` (one promise per request instead of three); a failure still surfaces as before.
    void work.then(
      () => this.inFlight.delete(work),
      (err: unknown) => {
        this.inFlight.delete(work);
        throw err;
      },
    );
  }

  /**
   * Handles one message. The auth decision is taken synchronously, before any
   * await, so frames are admitted in arrival order: a `session.auth` followed
   * immediately by another call cannot race the gate. `bytes` is the size of
   * the frame the message arrived in.
   */
  private handle(message: Incoming, bytes: number): Promise<Frame | undefined> {
    switch (message.kind) {
      case "response":
        this.session.peer.settle(message.id, message.result, message.error, bytes);
        return Promise.resolve(undefined);
      case "invalid":
        return Promise.resolve(errorFrame(message.id, { code: RPC_INVALID_REQUEST, message: `invalid request: ${message.message}` }));
      case "request":
      case "notification":
        break;
    }
    const id = message.kind === "request" ? message.id : undefined;
    this.requests++;
    const started = performance.now();
    const reply = (result: () => JsonValue | Promise<JsonValue>): Promise<Frame | undefined> =>
      this.run(result).then((outcome) => {
        this.log.methodFinished(this.id, loggedMethod(message.method), performance.now() - started, methodOutcome(outcome));
        if (id === undefined) return undefined;
        return "error" in outcome ? errorFrame(id, outcome.error) : resultFrame(id, outcome.result);
      });

    // `run` calls its body synchronously, so the token is checked before the next frame is read.
    if (message.method === "session.auth") return reply(() => this.authenticate(message.params));
    if (!this.authenticated) {
      // Refuse and hang up: an unauthenticated peer gets no second chance on this socket.
      this.log.authFailed(this.id, "not_authenticated");
      if (id !== undefined) {
        void this.send(errorFrame(id, { code: RPC_AUTH_REQUIRED, message: "auth required: send session.auth with the server's token as the first call" }));
      }
      this.cancelInFlight("auth required");
      this.closeSocket("auth required", CLOSE_POLICY_VIOLATION);
      return Promise.resolve(undefined);
    }
    if (this.options.isDraining()) {
      return reply(() => {
        throw new CarError("cancelled", "the server is shutting down and accepts no new requests");
      });
    }
    const spec = getOwn(this.options.methods, message.method);
    if (spec === undefined) {
      return reply(() => {
        throw new RpcFault(RPC_METHOD_NOT_FOUND, `unknown method: ${message.method}`);
      });
    }
    const max = this.options.limits.maxRequestsPerConnection;
    if (this.requestsInFlight >= max) {
      return reply(() => {
        throw new CarError("rate_limited", `too many requests in flight on this connection: the limit is ${max} (--max-requests); retry when one is answered`);
      });
    }
    this.requestsInFlight += 1;
    const params = message.params;
    const deadline = handlerDeadlineMs(message.method, params, this.options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS, this.options.toolTimeoutMs);
    return reply(() => withDeadline(message.method, deadline, Promise.resolve(spec.handler(params, this.contextFor(message.method, spec, params))))).then(
      (frame) => {
        this.requestsInFlight -= 1;
        return frame;
      },
      (err: unknown) => {
        this.requestsInFlight -= 1;
        throw err;
      },
    );
  }

  /**
   * What the method's declaration allows this caller, checked before its
   * handler runs: its role, its params against the declared schema
   * (params-schema.ts), for a `tenant_id` method the validated tenant
   * scope it will reach keys through, and for a method that declares held
   * resources the connection's share of the server's bound.
   */
  private contextFor(method: string, spec: MethodSpec, params: JsonValue | undefined): MethodContext {
    const role = roleOf(this.session);
    if (spec.role === "operator") requireOperator({ session: this.session, role }, `${method} is an operator act`);
    if (spec.handshake && this.session.negotiatedProtocol === undefined) {
      throw new RpcFault(RPC_HANDSHAKE_REQUIRED, `protocol handshake required: call server.handshake before ${method}`);
    }
    if (spec.capability !== undefined && !this.session.capabilities.has(spec.capability)) {
      throw new RpcFault(RPC_CAPABILITY_MISMATCH, `protocol capability mismatch: ${method} needs ${spec.capability} negotiated in server.handshake`);
    }
    checkParams(method, params);
    const tenant = spec.tenancy === "tenant_id" ? tenantScope(tenantParam(spec, params)) : UNSCOPED;
    const held = spec.resources.length > 0 ? this.session.held : HOLDS_NOTHING;
    return { session: this.session, signal: this.aborter.signal, role, tenant, held };
  }

  private async run(body: () => JsonValue | Promise<JsonValue>): Promise<{ result: JsonValue } | { error: ReturnType<typeof toRpcError> }> {
    try {
      return { result: await body() };
    } catch (err) {
      return { error: toRpcError(err) };
    }
  }

  /**
   * `session.auth`: a wrong token leaves the connection unauthenticated (the
   * next other call closes it); with auth off any token is accepted so a
   * client that always authenticates works against both postures. `agent_id`
   * binds the connection to that agent (as `?agent_id=` does); `host_token`
   * instead of `token` grants the host-management role.
   */
  private authenticate(params: JsonValue | undefined): JsonValue {
    // Checked by its declaration like every other method's params (this one is dispatched before the table).
    checkParams("session.auth", params);
    const p = paramsObject(params);
    const token = this.options.token;
    const hostToken = optionalString(p, "host_token");
    if (hostToken !== undefined) {
      if (getOwn(p, "agent_id") !== undefined)
        throw new CarError("invalid_params", "invalid params: session.auth takes { token, agent_id? } or { host_token }, not both");
      if (this.options.hostToken === undefined || !tokensMatch(this.options.hostToken, hostToken)) this.refuseToken();
      this.authenticated = true;
      this.session.hostRole = true;
      return { ok: true, auth_enabled: token !== undefined, role: "host" };
    }
    const agentId = optionalString(p, "agent_id");
    if (token !== undefined && !tokensMatch(token, requireString(p, "token"))) this.refuseToken();
    if (agentId !== undefined) this.session.bindAgent(agentId);
    this.authenticated = true;
    return { ok: true, auth_enabled: token !== undefined, ...(agentId !== undefined ? { agent_id: agentId } : {}) };
  }

  private refuseToken(): never {
    this.log.authFailed(this.id, "token_mismatch");
    this.authFailures += 1;
    if (this.authFailures >= this.options.limits.maxAuthFailures) {
      // Answered first (the reply is queued before the close frame), then hung up: no guessing on this socket.
      setImmediate(() => this.closeSocket("too many failed session.auth attempts", CLOSE_POLICY_VIOLATION));
    }
    throw new RpcFault(RPC_INTERNAL_ERROR, "auth failed: token mismatch");
  }
}

/** A `tenant_id` method's tenant: `tenant_id`, or the method's alias for it; both given must name the same tenant. */
function tenantParam(spec: MethodSpec, params: JsonValue | undefined): string | undefined {
  const p = paramsObject(params);
  const id = optionalString(p, "tenant_id");
  const alias = spec.tenantAlias === undefined ? undefined : optionalString(p, spec.tenantAlias);
  if (id !== undefined && alias !== undefined && id !== alias) {
    throw new CarError(
      "invalid_params",
      `invalid params: tenant_id '${id.slice(0, 128)}' and ${spec.tenantAlias} '${alias.slice(0, 128)}' name different tenants`,
    );
  }
  return id ?? alias;
}

/** What the log may say about a method's answer: its result (counted, never printed) or its error codes. */
function methodOutcome(outcome: { result: JsonValue } | { error: ReturnType<typeof toRpcError> }): MethodOutcome {
  if ("result" in outcome) return { ok: true, result: outcome.result };
  const data = outcome.error.data;
  const carCode = data !== null && typeof data === "object" && !Array.isArray(data) ? getOwn(data, "car_code") : undefined;
  return { ok: false, rpcCode: outcome.error.code, carCode: typeof carCode === "string" ? carCode : undefined };
}

/** Text and binary frames are both read as UTF-8 JSON; invalid JSON is a -32700, not a hang-up. */
function frameBytes(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.byteLength, 0);
  return data.byteLength;
}

function frameText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
}
