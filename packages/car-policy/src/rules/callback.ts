/**
 * A host-written rule: a function returning a reason to deny. An empty string
 * or `undefined` passes. A callback that throws is turned into a violation by
 * the engine, so a broken predicate fails closed instead of crashing dispatch.
 */
import type { Action } from "@car/ir";
import type { PolicyRule } from "../engine.ts";
import type { StateLookup } from "../state.ts";

export type PolicyCallback = (action: Action, state: StateLookup) => string | undefined | null;

export function callbackRule(name: string, callback: PolicyCallback): PolicyRule {
  return {
    name,
    evaluate(action, state) {
      const reason = callback(action, state);
      return typeof reason === "string" && reason !== "" ? reason : undefined;
    },
  };
}
