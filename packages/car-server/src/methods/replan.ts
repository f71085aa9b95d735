/**
 * `replan.set_config`: this session's replan loop. With `max_replans > 0`, a
 * `proposal.submit` whose run fails (or, with `replan_on_rejected`, has an
 * action rejected) is rolled back as always, then the client's model is
 * asked for a replacement through a `planner.propose` request carrying what
 * failed; the replacement runs through the same admission as any proposal.
 * The config is read strictly (@car/engine/planner's `parseReplanConfig`):
 * `verify_before_execute: false` is refused, since nothing skips verification.
 */
import type { JsonValue } from "@car/ir";
import { parseReplanConfig } from "@car/engine/planner";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { paramsObject } from "../params.ts";

function setConfig(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  ctx.session.replan = parseReplanConfig(paramsObject(params));
  return null;
}

export const replanMethods: MethodTable = { "replan.set_config": agentMethod(setConfig) };
