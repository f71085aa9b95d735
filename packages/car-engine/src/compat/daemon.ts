/**
 * The original binding's daemon surface, over `@car/client`: `daemonCall`
 * (any method by name, JSON strings in and out), handlers for the server's
 * requests and notifications, `DaemonRpcError`, `protocolVersion()` and
 * `HostClient`'s operator wrappers. Code that drove the original daemon
 * through `car-runtime` drives `car serve` with its import line changed.
 *
 * Where to connect, as the original: `CAR_DAEMON_URL` (default
 * `ws://127.0.0.1:9100`); the token from `CAR_AUTH_TOKEN`, else the server's
 * token file under `CAR_HOME` (`auth-token.<port>`, then `auth-token`), else
 * none (a `--no-auth` server).
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import { CarClient, CarRpcError, type RequestHandler } from "@car/client";
import { PROTOCOL, PROTOCOL_VERSION } from "@car/client/protocol";
import { CarError, type CarErrorCode, isCarError, type JsonValue } from "@car/ir";

/** The wire protocol version this binding speaks (`server.handshake`). */
export function protocolVersion(): number {
  return PROTOCOL_VERSION;
}

/** This package's version: the client library's, as the original's `clientVersion()` reports its own. */
export function clientVersion(): string {
  return (createRequire(import.meta.url)("@car/engine/package.json") as { version: string }).version;
}

/** A daemon's JSON-RPC error, numbered as it came; `carCode` is its CarError code from the one table. */
export class DaemonRpcError extends Error {
  override readonly name: string = "DaemonRpcError";
  readonly code: number;
  readonly data: unknown;
  readonly carCode: CarErrorCode;
  constructor(error: CarRpcError) {
    super(error.message, { cause: error });
    this.code = error.rpcCode;
    this.data = error.data;
    this.carCode = error.code;
  }
}

export interface DaemonOptions {
  /** Overrides `CAR_DAEMON_URL`. */
  daemonUrl?: string;
  /** Overrides the token discovery. */
  daemonToken?: string;
  /** The environment read for `CAR_DAEMON_URL`, `CAR_AUTH_TOKEN` and `CAR_HOME` (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_DAEMON_URL = "ws://127.0.0.1:9100";

async function readToken(path: string): Promise<string | undefined> {
  try {
    const token = (await readFile(path, "utf8")).trim();
    return token === "" ? undefined : token;
  } catch {
    return undefined;
  }
}

/** `CAR_AUTH_TOKEN` when set and not blank, else the token file of the server on the URL's port, else `auth-token`. */
export async function discoverToken(url: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const fromEnv = env["CAR_AUTH_TOKEN"]?.trim();
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const home = env["CAR_HOME"] ?? join(homedir(), ".car");
  const port = new URL(url).port || "9100";
  return (await readToken(join(home, `auth-token.${port}`))) ?? (await readToken(join(home, "auth-token")));
}

function parseParams(method: unknown, paramsJson: unknown): unknown {
  if (typeof method !== "string") throw new CarError("invalid_params", "a daemon method name must be a string");
  if (typeof paramsJson !== "string") throw new CarError("invalid_params", `${method}: params must be JSON text (a string)`);
  try {
    return JSON.parse(paramsJson);
  } catch (err) {
    throw new CarError("invalid_params", `${method}: params are not JSON: ${(err as Error).message}`);
  }
}

/**
 * A connection that could not be made, named with where it went. As in the
 * original, a transport failure is no daemon answer: a plain Error with no
 * JSON-RPC code (a CarError from the client, e.g. a refused handshake, passes as it is).
 */
function unreachable(url: string, err: unknown): unknown {
  if (isCarError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new Error(`cannot reach the CAR daemon at ${url} (CAR_DAEMON_URL): ${message}`, { cause: err });
}

function handlerArgs(method: unknown, handler: unknown): void {
  if (typeof method !== "string") throw new CarError("invalid_params", "a daemon method name must be a string");
  if (typeof handler !== "function") throw new CarError("invalid_params", `${method}: the handler must be a function (paramsJson) => …`);
}

/** One lazily opened daemon connection with the handlers registered for it; a later call after `close` reconnects. */
export class DaemonLink {
  readonly #options: DaemonOptions;
  readonly #requestHandlers = new Map<string, (paramsJson: string) => Promise<string>>();
  readonly #notificationHandlers: [string, (paramsJson: string) => void][] = [];
  #client: Promise<CarClient> | undefined;

  constructor(options: DaemonOptions = {}) {
    this.#options = options;
  }

  async call(method: string, paramsJson: string): Promise<string> {
    const params = parseParams(method, paramsJson);
    let client: CarClient;
    try {
      client = await this.#connected();
    } catch (err) {
      throw err instanceof CarRpcError ? new DaemonRpcError(err) : unreachable(this.#url(), err);
    }
    try {
      return JSON.stringify(await client.request(method, params));
    } catch (err) {
      throw err instanceof CarRpcError ? new DaemonRpcError(err) : err;
    }
  }

  onRequest(method: string, handler: (paramsJson: string) => Promise<string>): void {
    handlerArgs(method, handler);
    this.#requestHandlers.set(method, handler);
    void this.#client?.then(
      (c) => this.#install(c, method, handler),
      () => {},
    );
  }

  onNotification(method: string, handler: (paramsJson: string) => void): void {
    handlerArgs(method, handler);
    this.#notificationHandlers.push([method, handler]);
    void this.#client?.then(
      (c) => c.onNotification(method, (p) => handler(JSON.stringify(p ?? null))),
      () => {},
    );
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await (await client.catch(() => undefined))?.close();
  }

  #install(client: CarClient, method: string, handler: (paramsJson: string) => Promise<string>): void {
    const wrapped: RequestHandler = async (params) => JSON.parse(await handler(JSON.stringify(params ?? null))) as JsonValue;
    client.onRequest(method, wrapped);
  }

  #url(): string {
    return this.#options.daemonUrl ?? (this.#options.env ?? process.env)["CAR_DAEMON_URL"] ?? DEFAULT_DAEMON_URL;
  }

  #connected(): Promise<CarClient> {
    this.#client ??= (async () => {
      const env = this.#options.env ?? process.env;
      const url = this.#url();
      const token = this.#options.daemonToken ?? (await discoverToken(url, env));
      const client = await CarClient.connect(url, { token, clientVersion: "@car/engine/compat" });
      for (const [method, handler] of this.#requestHandlers) this.#install(client, method, handler);
      for (const [method, handler] of this.#notificationHandlers) client.onNotification(method, (p) => handler(JSON.stringify(p ?? null)));
      void client.closed.then(() => {
        if (this.#client !== undefined) this.#client = undefined;
      });
      return client;
    })();
    const attempt = this.#client;
    attempt.catch(() => {
      if (this.#client === attempt) this.#client = undefined;
    });
    return attempt;
  }
}

/** `permission.approve` → `permissionApprove`: the original's generated wrapper names. */
type Camel<S extends string> = S extends `${infer H}.${infer T}`
  ? `${H}${Capitalize<Camel<T>>}`
  : S extends `${infer H}_${infer T}`
    ? `${H}${Capitalize<Camel<T>>}`
    : S;
/**
 * Agent-role methods node-api.md nevertheless lists on HostClient: on the
 * original a host connection may change any session's tier; here the server
 * decides what a connection may do, and the wrapper just makes the call.
 */
const HOST_AGENT_METHODS = ["permission.set_tier"] as const;
type OperatorMethod =
  | { [M in keyof typeof PROTOCOL]: (typeof PROTOCOL)[M]["role"] extends "operator" ? M : never }[keyof typeof PROTOCOL]
  | (typeof HOST_AGENT_METHODS)[number];
type OperatorWrappers = { [M in OperatorMethod as Camel<M>]: (paramsJson: string) => Promise<string> };

function camel(method: string): string {
  return method.replace(/[._]([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** Anything with a daemon connection (a compat `CarRuntime`). */
export interface DaemonCaller {
  daemonCallHostManagement(method: string, paramsJson: string): Promise<string>;
}

/**
 * The original's host-authority client. `car serve` has no separate host
 * token: the operator role belongs to a connection that acts for no agent,
 * so these wrappers are the protocol's `operator` methods (generated from
 * its declarations), plus `permissionSetTier`, on the runtime's own connection.
 */
class HostConnection {
  readonly #runtime: DaemonCaller;
  constructor(runtime: DaemonCaller) {
    if (typeof (runtime as Partial<DaemonCaller> | null)?.daemonCallHostManagement !== "function")
      throw new CarError("invalid_params", "HostClient takes a CarRuntime from @car/engine/compat");
    this.#runtime = runtime;
    for (const [method, declaration] of Object.entries(PROTOCOL)) {
      if (declaration.role !== "operator" && !(HOST_AGENT_METHODS as readonly string[]).includes(method)) continue;
      Object.defineProperty(this, camel(method), { value: (paramsJson: string) => this.daemonCallHostManagement(method, paramsJson), enumerable: false });
    }
  }

  daemonCallHostManagement(method: string, paramsJson: string): Promise<string> {
    return this.#runtime.daemonCallHostManagement(method, paramsJson);
  }
}

export type HostClient = HostConnection & OperatorWrappers;
/** A HostClient over a runtime's daemon connection (its wrappers are added per operator method). */
export const HostClient = HostConnection as unknown as new (runtime: DaemonCaller) => HostClient;
