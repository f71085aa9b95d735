/**
 * `@car/client/protocol`: every JSON-RPC method of `car serve`, declared
 * once — role, params schema, result schema — and the TypeScript types
 * inferred from those schemas. The server validates and answers
 * `server.schema` from these declarations; `CarClient`'s calls are typed by
 * them. A new method is declared in the file of its namespace here and
 * merged into `PROTOCOL` below.
 */
import { eventMethods } from "./events.ts";
import { multiMethods } from "./multi.ts";
import { oversightMethods } from "./oversight.ts";
import { permissionMethods } from "./permissions.ts";
import { plannerMethods } from "./planner.ts";
import { policyMethods } from "./policy.ts";
import { proposalMethods } from "./proposal.ts";
import { replanMethods } from "./replan.ts";
import { runMethods } from "./runs.ts";
import { sessionMethods } from "./session.ts";
import { skillMethods } from "./skills.ts";
import { stateMethods } from "./state.ts";
import { toolMethods } from "./tools.ts";

export const PROTOCOL = Object.freeze({
  ...sessionMethods,
  ...toolMethods,
  ...proposalMethods,
  ...policyMethods,
  ...stateMethods,
  ...eventMethods,
  ...permissionMethods,
  ...multiMethods,
  ...plannerMethods,
  ...replanMethods,
  ...skillMethods,
  ...runMethods,
  ...oversightMethods,
});

/** Where a new method's declaration goes (named in the method-table walk's failure message). */
export const PROTOCOL_SOURCE = "packages/car-client/src/protocol/<namespace>.ts (merged in packages/car-client/src/protocol/index.ts)";

/** The wire protocol version (`server.handshake`). */
export const PROTOCOL_VERSION = 3;

export { serverNotifications, serverRequests } from "./callbacks.ts";
export { callback, method, type CallbackDeclaration, type MethodDeclaration, type MethodRole } from "./declaration.ts";
export type { IrShapeName, Schema } from "./schema.ts";
export type { MethodName, NotificationName, NotificationParams, ParamsOf, RequestName, RequestParams, RequestResult, ResultOf } from "./types.ts";
