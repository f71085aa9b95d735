/**
 * Operational read-outs of the reference protocol: `capabilities.list`
 * (which methods this connection may call, and with what role),
 * `metrics.summary` and `events.cost_by_agent` (folds over the audit log the
 * session sees).
 */
import type { JsonValue } from "@car/ir";
import { costByAgent, metricsSummary } from "@car/engine";
import { type MethodContext, type MethodHandler, type MethodTable, agentMethod } from "../method.ts";

/** `capabilities.list` over `table` (each method's declared role), given lazily because the table includes this method. */
export function capabilitiesList(table: () => MethodTable): MethodHandler {
  return (_params: JsonValue | undefined, ctx: MethodContext): JsonValue => {
    const methods = Object.entries(table())
      .map(([method, spec]) => ({ method, role: spec.role }))
      .filter((row) => ctx.role === "operator" || row.role === "agent")
      .sort((a, b) => (a.method < b.method ? -1 : 1));
    return { caller_role: ctx.role, count: methods.length, methods };
  };
}

function summary(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return metricsSummary(ctx.session.runtime.events.query()) as unknown as JsonValue;
}

function costs(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return costByAgent(ctx.session.runtime.events.query()) as unknown as JsonValue;
}

export const operationMethods: MethodTable = {
  "metrics.summary": agentMethod(summary),
  "events.cost_by_agent": agentMethod(costs),
};
