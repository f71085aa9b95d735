import { CarError } from "@car/ir";
import type { MethodContext, MethodRole } from "./method.ts";
import type { Session } from "./session.ts";

/** The caller's role: a connection acting for an agent (`?agent_id=`) is an agent's; any other is the operator's. */
export function roleOf(session: Session): MethodRole {
  return session.options.agentId !== undefined ? "agent" : "operator";
}

/**
 * Refuses an operator act on an agent's connection: an agent may not
 * approve, reject, change postures, raise its tier or cut the audit log, or
 * it could grant itself what its posture withholds or erase what it did.
 */
export function requireOperator(ctx: Pick<MethodContext, "session" | "role">, what: string): void {
  if (ctx.role === "operator") return;
  throw new CarError("unauthorized", `${what}: a connection acting for agent '${ctx.session.options.agentId}' cannot make operator decisions`);
}
