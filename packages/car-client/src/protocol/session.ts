/** Admission and discovery: `session.auth`, `server.handshake`, `session.init`, `capabilities.list`, `server.schema`, `session.policy.*`. */
import { method } from "./declaration.ts";
import { anyObject, boolean, integer, ir, listOf, number, object, optional, optionalListOf, string, stringList } from "./schema.ts";

export const sessionMethods = {
  "session.auth": method({
    role: "agent",
    summary: "Presents the server's token (binding the connection to `agent_id`), or the host token for the host role; the first call when auth is on.",
    // An agent id is a plain identifier: it names postures, rules and run owners. `host_token` with `agent_id` is refused by the server.
    params: object({ token: optional("string"), agent_id: { type: ["string", "null"], pattern: "^[A-Za-z0-9_.:@-]{1,128}$" }, host_token: optional("string") }),
    result: object({ ok: boolean, auth_enabled: boolean, agent_id: string, role: { const: "host" } }, ["ok", "auth_enabled"]),
  }),
  "server.handshake": method({
    role: "agent",
    summary: "Negotiates the wire protocol version (exactly 3) and optional capabilities.",
    // protocol_version is read by the handler: a missing or wrong one is -32006, not -32602.
    params: object({
      protocol_version: {},
      client_version: optional("string"),
      required_capabilities: optional("array"),
      optional_capabilities: optional("array"),
    }),
    result: object(
      { protocol_version: number, server_version: string, client_protocol_version: number, client_version: string, negotiated_capabilities: stringList },
      ["protocol_version", "server_version", "client_protocol_version", "client_version", "negotiated_capabilities"],
    ),
  }),
  "session.init": method({
    role: "agent",
    summary: "Registers tools and policies (and narrows the standing tier) in one call.",
    params: object({
      client_id: optional("string"),
      tools: optionalListOf(ir("ToolSchemaInput")),
      policies: optional("array"),
      tier: optional("string"),
    }),
    result: object({ session_id: string, tools_registered: integer, policies_registered: integer }, ["session_id", "tools_registered", "policies_registered"]),
  }),
  "capabilities.list": method({
    role: "agent",
    summary: "The methods this connection may call, with their roles.",
    params: object({}),
    result: object({ caller_role: string, count: integer, methods: listOf(object({ method: string, role: string }, ["method", "role"])) }, [
      "caller_role",
      "count",
      "methods",
    ]),
  }),
  "server.schema": method({
    role: "agent",
    summary: "This server's wire schema: every method's params and result schema and role, with its SHA-256 digest.",
    params: object({}),
    result: object({ schema: anyObject, digest: string, digest_algorithm: { const: "sha256" }, car_version: string }, [
      "schema",
      "digest",
      "digest_algorithm",
      "car_version",
    ]),
  }),
  "session.policy.open": method({
    role: "agent",
    summary: "Opens a policy session on this connection: its id scopes policy.register/unregister/list and proposal.submit.",
    params: object({}),
    result: object({ session_id: string }, ["session_id"]),
  }),
  "session.policy.close": method({
    role: "agent",
    summary: "Closes a policy session of this connection, dropping its policies.",
    params: object({ session_id: string }, ["session_id"]),
    result: object({ closed: boolean }, ["closed"]),
  }),
} as const;
