/**
 * Operational read-outs of the reference protocol: `capabilities.list`
 * (which methods this connection may call, and with what role),
 * `metrics.summary` and `events.cost_by_agent` (folds over the audit log the
 * session sees).
 */
import type { JsonValue } from "@car/ir";
import { costByAgent, metricsSummary } from "@car/engine";
import type { MethodContext, MethodHandler, MethodTable } from "../method.ts";

/** Methods only an operator connection (one acting for no agent) may call; see operator.ts. */
const OPERATOR_METHODS: ReadonlySet<string> = new Set(["permission.approve", "permission.reject", "agent_permissions.set", "agent_permissions.reset"]);

/** `capabilities.list` over `table`, given lazily because the table includes this method. */
export function capabilitiesList(table: () => MethodTable): MethodHandler {
  return (_params: JsonValue | undefined, ctx: MethodContext): JsonValue => {
    const agentScoped = ctx.session.options.agentId !== undefined;
    const methods = Object.keys(table())
      .sort()
      .map((method) => ({ method, role: OPERATOR_METHODS.has(method) ? "operator" : "agent" }))
      .filter((row) => !agentScoped || row.role === "agent");
    return { caller_role: agentScoped ? "agent" : "operator", count: methods.length, methods };
  };
}

function summary(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return metricsSummary(ctx.session.runtime.events.query()) as unknown as JsonValue;
}

function costs(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return costByAgent(ctx.session.runtime.events.query()) as unknown as JsonValue;
}

export const operationMethods: MethodTable = {
  "metrics.summary": summary,
  "events.cost_by_agent": costs,
};
