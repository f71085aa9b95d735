/**
 * `tools.register` / `tools.list` / `tools.unregister`, and the detached-tool
 * controls `tools.poll` / `tools.cancel` / `tools.stream.subscribe`. Tools
 * registered here run on the client through `tools.execute` callbacks.
 */
import { isJsonObject, type JsonValue } from "@car/ir";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, paramsObject, requireArray, requireString } from "../params.ts";
import { registerAll, toolDefinition } from "./definitions.ts";

/** Params are the array itself (the reference), or `{ tools: [...] }`. */
function register(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const list = Array.isArray(params) ? params : requireArray(paramsObject(params), "tools");
  const tools = list.map((t, i) => toolDefinition(t, `[${i}]`));
  registerAll(ctx.session, tools, []);
  return tools.length;
}

function list(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const tools = ctx.session.runtime.listTools();
  return { tools: tools as unknown as JsonValue, count: tools.length };
}

function unregister(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const name = requireString(paramsObject(params), "name");
  return { unregistered: name, removed: ctx.session.runtime.unregisterTool(name) };
}

/** A handle as the engine hands it out (`{ id }`) or as its bare id string. */
function handleParam(params: JsonValue | undefined): string {
  const handle = paramsObject(params)["handle"];
  if (typeof handle === "string" && handle !== "") return handle;
  if (isJsonObject(handle) && typeof handle["id"] === "string") return handle["id"];
  throw invalidParams("handle is required (a tool_handle string or { id })");
}

function poll(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const result = ctx.session.runtime.toolPoll(handleParam(params));
  // On the wire a handle is its id string, as the action's `tool_handle` output is (reference § tools.poll).
  return (result === null ? null : { ...result, handle: result.handle.id }) as unknown as JsonValue;
}

function cancel(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return { cancelled: ctx.session.runtime.toolCancel(handleParam(params)) };
}

function streamSubscribe(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  ctx.session.streamToolEvents();
  return { subscribed: true };
}

export const toolMethods: MethodTable = {
  "tools.register": agentMethod(register),
  "tools.list": agentMethod(list),
  "tools.unregister": agentMethod(unregister),
  "tools.poll": agentMethod(poll),
  "tools.cancel": agentMethod(cancel),
  "tools.stream.subscribe": agentMethod(streamSubscribe),
};
