/**
 * The one method table: one fragment per namespace, merged once. Every
 * entry declares its role and tenancy (method.ts), and its params and
 * result schema in `@car/client/protocol`; the dispatcher enforces all of
 * it, `capabilities.list` reports the roles, `server.schema` the schemas,
 * and method-table.test.ts walks it.
 */
import { agentMethod, type MethodTable } from "../method.ts";
import { agentPermissionMethods } from "./agent-permissions.ts";
import { approvalMethods } from "./approvals.ts";
import { auditMethods } from "./audit.ts";
import { eventMethods } from "./events.ts";
import { handshakeMethods } from "./handshake.ts";
import { multiMethods } from "./multi.ts";
import { plannerMethods } from "./planner.ts";
import { policyMethods } from "./policy.ts";
import { proposalMethods } from "./proposal.ts";
import { sessionMethods } from "./session-init.ts";
import { stateMethods } from "./state.ts";
import { staticAnalysisMethods } from "./static-analysis.ts";
import { toolMethods } from "./tools.ts";
import { capabilitiesList, operationMethods } from "./operations.ts";
import { skillMethods } from "./skills.ts";
import { runMethods } from "./runs.ts";
import { policySessionMethods } from "./policy-sessions.ts";
import { hostMethods } from "./host.ts";
import { supervisionMethods } from "./supervision.ts";
import { replanMethods } from "./replan.ts";
import { serverSchema } from "./schema.ts";

export const METHODS: MethodTable = Object.freeze({
  ...handshakeMethods,
  ...sessionMethods,
  ...toolMethods,
  ...proposalMethods,
  ...staticAnalysisMethods,
  ...policyMethods,
  ...stateMethods,
  ...eventMethods,
  ...auditMethods,
  ...approvalMethods,
  ...agentPermissionMethods,
  ...multiMethods,
  ...plannerMethods,
  ...replanMethods,
  ...skillMethods,
  ...runMethods,
  ...policySessionMethods,
  ...operationMethods,
  ...supervisionMethods,
  ...hostMethods,
  "capabilities.list": agentMethod(capabilitiesList(() => METHODS)),
  "server.schema": agentMethod(serverSchema(() => METHODS)),
});
