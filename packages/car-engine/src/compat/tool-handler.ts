/**
 * The original binding's process-wide callbacks: one tool handler (used by
 * `submitProposal`), one tool-cancel handler (told when the engine gives up
 * on a call) and one agent runner (used by the multi-agent functions).
 * Kept module-global because that is the contract code written for it relies
 * on; the idiomatic API passes both explicitly instead.
 */
import { CarError } from "@car/ir";
import type { ToolCallback } from "../tools/handler.ts";

export type JsonCallback = (callJson: string) => Promise<string>;
export type AgentRunner = (specJson: string, task: string) => Promise<string>;

let toolHandler: ToolCallback | undefined;
let cancelHandler: ((requestId: string) => void) | undefined;
let agentRunner: AgentRunner | undefined;

export function registerToolHandler(handlerFn: JsonCallback): void {
  if (typeof handlerFn !== "function") throw new CarError("invalid_params", "registerToolHandler takes a function (callJson) => Promise<string>");
  toolHandler = reportingCancellation(handlerFn);
}

/**
 * `handlerFn(requestId)` is called when the engine gives up on a tool call
 * still running — its `timeout_ms` expired or its proposal aborted — with
 * the `request_id` the call's JSON carried, so the host can stop the work it
 * started for it. Fire-and-forget: what it returns or throws is not awaited
 * or reported. Re-registering replaces it.
 */
export function registerToolCancelHandler(handlerFn: (requestId: string) => void): void {
  if (typeof handlerFn !== "function") throw new CarError("invalid_params", "registerToolCancelHandler takes a function (requestId) => void");
  cancelHandler = handlerFn;
}

export function unregisterToolCancelHandler(): void {
  cancelHandler = undefined;
}

/** A JSON callback as the engine calls it, telling the cancel handler (the one current at the time) about a call it abandons. */
export function reportingCancellation(handlerFn: JsonCallback): ToolCallback {
  return async (callJson, signal) => {
    const abandoned = () => {
      const handler = cancelHandler;
      if (handler === undefined) return;
      try {
        void handler(requestIdOf(callJson));
      } catch {
        // fire-and-forget, as in the original: a failing cancel handler cannot change the call's outcome
      }
    };
    signal.addEventListener("abort", abandoned, { once: true });
    try {
      return await handlerFn(callJson);
    } finally {
      signal.removeEventListener("abort", abandoned);
    }
  };
}

function requestIdOf(callJson: string): string {
  const id = (JSON.parse(callJson) as { request_id?: unknown }).request_id;
  return typeof id === "string" ? id : "";
}

export function unregisterToolHandler(): void {
  toolHandler = undefined;
}

/** The handler `submitProposal` dispatches to; undefined sends tools to their registered handlers only. */
export function currentToolHandler(): ToolCallback | undefined {
  return toolHandler;
}

export async function registerAgentRunner(agentFn: AgentRunner): Promise<void> {
  if (typeof agentFn !== "function") throw new CarError("invalid_params", "registerAgentRunner takes a function (specJson, task) => Promise<string>");
  agentRunner = agentFn;
}

export function currentAgentRunner(): AgentRunner {
  if (agentRunner === undefined) throw new CarError("invalid_params", "no agent runner: call registerAgentRunner(agentFn) first");
  return agentRunner;
}
