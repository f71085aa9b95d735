/**
 * The original binding's process-wide callbacks: one tool handler (used by
 * `submitProposal`) and one agent runner (used by the multi-agent functions).
 * Kept module-global because that is the contract code written for it relies
 * on; the idiomatic API passes both explicitly instead.
 */
import { CarError } from "@car/ir";
import type { ToolCallback } from "../tools/handler.ts";

export type JsonCallback = (callJson: string) => Promise<string>;
export type AgentRunner = (specJson: string, task: string) => Promise<string>;

let toolHandler: ToolCallback | undefined;
let agentRunner: AgentRunner | undefined;

export function registerToolHandler(handlerFn: JsonCallback): void {
  if (typeof handlerFn !== "function") throw new CarError("invalid_params", "registerToolHandler takes a function (callJson) => Promise<string>");
  toolHandler = (callJson) => handlerFn(callJson);
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
