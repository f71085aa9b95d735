/** `tools.*`: the session's tools (run on the client through `tools.execute`) and detached-tool handles. */
import { method } from "./declaration.ts";
import { anyValue, boolean, integer, ir, listOf, object, string } from "./schema.ts";

/** A handle as the engine hands it out (`{ id }`) or its bare id; the handler reads both. */
const handle = anyValue;

export const toolMethods = {
  "tools.register": method({
    role: "agent",
    summary: "Registers tools (the array itself, or `{ tools }`); answers how many.",
    params: { anyOf: [listOf(ir("ToolSchemaInput")), object({ tools: listOf(ir("ToolSchemaInput")) }, ["tools"])] },
    result: integer,
  }),
  "tools.list": method({
    role: "agent",
    summary: "The session's tools, sorted by name.",
    params: object({}),
    result: object({ tools: listOf(ir("ToolSchema")), count: integer }, ["tools", "count"]),
  }),
  "tools.unregister": method({
    role: "agent",
    summary: "Removes a tool by name (`removed: 0` is not an error).",
    params: object({ name: string }, ["name"]),
    result: object({ unregistered: string, removed: integer }, ["unregistered", "removed"]),
  }),
  "tools.poll": method({
    role: "agent",
    summary: "A detached call's status, or null once consumed.",
    params: object({ handle }, ["handle"]),
    result: { anyOf: [ir("ToolPollResult"), { type: "null" }] },
  }),
  "tools.cancel": method({
    role: "agent",
    summary: "Cancels a detached call.",
    params: object({ handle }, ["handle"]),
    result: object({ cancelled: boolean }, ["cancelled"]),
  }),
  "tools.stream.subscribe": method({
    role: "agent",
    summary: "Streams detached calls' chunks as `tools.stream.event` notifications.",
    params: object({}),
    result: object({ subscribed: { const: true } }, ["subscribed"]),
  }),
} as const;
