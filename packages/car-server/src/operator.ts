import { CarError } from "@car/ir";
import type { MethodContext } from "./method.ts";

/**
 * Decisions about agents are the operator's: a connection that acts for an
 * agent (`?agent_id=`) may not approve, reject, or change postures, or it
 * could grant itself what its posture withholds.
 */
export function requireOperator(ctx: MethodContext, method: string): void {
  const agentId = ctx.session.options.agentId;
  if (agentId !== undefined) throw new CarError("unauthorized", `${method}: a connection acting for agent '${agentId}' cannot make operator decisions`);
}
