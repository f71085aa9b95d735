/**
 * The one method table's entry. Every JSON-RPC method declares, beside its
 * handler, who may call it and how it reaches tenant-scoped data; the
 * dispatcher (connection.ts) enforces both before the handler runs, so a
 * new method cannot forget a role check or a tenant scope.
 */
import type { JsonValue } from "@car/ir";
import type { Session } from "./session.ts";
import type { HeldAccount } from "./held-bytes.ts";
import type { TenantScope } from "./tenancy.ts";

/**
 * Who may call a method. `agent`: every authenticated connection, acting
 * within its own session. `operator`: only a connection that acts for no
 * agent (no `?agent_id=`) — decisions about agents and acts on the shared
 * record, which an agent would otherwise make for itself.
 */
export type MethodRole = "operator" | "agent";

/**
 * How a method reaches tenant-scoped state. `none`: it reads or writes no
 * state key. `tenant_id`: it takes an optional `tenant_id`, validated by the
 * dispatcher, and reaches keys only through `ctx.tenant` (the skills methods:
 * the skills of `ctx.tenant.id`, skill-library.ts). `proposal`: it
 * runs proposals, each held to the tenancy boundary by the session
 * runtime's admission guard (admission.ts).
 */
export type MethodTenancy = "none" | "tenant_id" | "proposal";

/**
 * What a call may make the server hold beyond its own frame, each bounded
 * (held-bytes.ts): `proposal` — a proposal slot and the run's tool output,
 * held by the session runtime's admission guard; `agent_answers` — the
 * answers of a multi-agent call; `state_values` — the values it stores.
 */
export type MethodResource = "proposal" | "agent_answers" | "state_values";

export interface MethodContext {
  session: Session;
  /** Fires when the connection closes or a forced shutdown abandons the call. */
  signal: AbortSignal;
  /** The caller's role on this connection. */
  role: MethodRole;
  /** The caller's tenant scope: its `tenant_id` for a `tenant_id` method, else the unscoped view. */
  tenant: TenantScope;
  /** The connection's share of what the server holds, for a method that declares a held resource; else an account that holds nothing. */
  held: HeldAccount;
}

export type MethodHandler = (params: JsonValue | undefined, ctx: MethodContext) => JsonValue | Promise<JsonValue>;

export interface MethodSpec {
  readonly handler: MethodHandler;
  readonly role: MethodRole;
  readonly tenancy: MethodTenancy;
  readonly resources: readonly MethodResource[];
  /** A second params field naming the tenant beside `tenant_id` (a `tenant_id` method only). */
  readonly tenantAlias: string | undefined;
  /** Refused with -32005 until the connection has negotiated the protocol (`server.handshake`). */
  readonly handshake: boolean;
  /** Refused with -32008 unless the connection negotiated this capability. */
  readonly capability: string | undefined;
}

export interface MethodDeclaration {
  tenancy?: MethodTenancy;
  resources?: readonly MethodResource[];
  /** The reference's other name for `tenant_id` on this method (`skills.ingest_provisional`'s `tenant`); both given must agree. */
  tenantAlias?: string;
  /** Needs `server.handshake` first, as the reference's `host.subscribe` does. */
  handshake?: boolean;
  /** A capability-gated method: the connection must negotiate it in `server.handshake`. */
  capability?: string;
}

/** A method table fragment: one file per namespace contributes one. */
export type MethodTable = Readonly<Record<string, MethodSpec>>;

function declare(role: MethodRole, handler: MethodHandler, declared: MethodDeclaration): MethodSpec {
  return Object.freeze({
    handler,
    role,
    tenancy: declared.tenancy ?? "none",
    resources: Object.freeze([...(declared.resources ?? [])]),
    tenantAlias: declared.tenantAlias,
    handshake: declared.handshake ?? false,
    capability: declared.capability,
  });
}

/** A method every authenticated connection may call; by default it reaches no tenant data and holds nothing. */
export function agentMethod(handler: MethodHandler, declared: MethodDeclaration = {}): MethodSpec {
  return declare("agent", handler, declared);
}

/** A method only an operator connection may call. */
export function operatorMethod(handler: MethodHandler, declared: MethodDeclaration = {}): MethodSpec {
  return declare("operator", handler, declared);
}
