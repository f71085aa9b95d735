/**
 * `car mcp`: an MCP server on stdio exposing `policy_check` (the same gate as
 * the PreToolUse hook), the stateless static checks `verify`, `simulate`,
 * `optimize` and `equivalent` — each a pure function of its arguments plus,
 * for `policy_check`, the policy files on disk — and the skill tools
 * (mcp-skills.ts) on a skill file.
 *
 * Built on the SDK's low-level `Server` so each tool's input JSON Schema is
 * exactly what is written here; arguments are checked against it with
 * @car/ir's validator, and proposals then go through `parseProposal`, so a
 * `__proto__` key inside parameters reaches the checks as an ordinary key.
 */
import { resolve } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  CarError,
  compileSchema,
  hasKey,
  isJsonObject,
  type JsonObject,
  type JsonValue,
  parseProposal,
  parseProposalWithGraph,
  serializeProposal,
  setOwn,
  toCarError,
} from "@car/ir";
import { policyCheck } from "@car/policy/gate";
import { equivalentDetailed, optimize, simulateDetailed, verify } from "@car/verify";
import { expectPositionals, parseArgs } from "@car/server/argv";
import { resolveCarHome } from "@car/server/home";
import { VERSION } from "../version.ts";
import { LineTransport } from "./mcp-transport.ts";
import { READ_ONLY_ANNOTATIONS, type ToolDefinition } from "./mcp-tool.ts";
import { skillTools } from "./mcp-skills.ts";

export const usage = `Usage: car mcp [--tenant ID]

Serves the Model Context Protocol on stdin/stdout with eight tools:
  policy_check  allow/deny for a proposed tool call, from CAR_HOME and project
                .car/policies (the PreToolUse hook's gate)
  verify        static verification of a proposal
  simulate      the state a proposal would leave behind
  optimize      the proposal with phantom state dependencies pruned
  equivalent    whether two proposals leave the same state on test states
  skill_list    the skills the caller sees: its own over the global ones
  skill_find    the skills that fit a task, best first
  skill_ingest  store a hand-written skill in the caller's own skills

The skills are car serve's, in CAR_HOME, as one caller sees them.

Options:
  --tenant <ID>  Act as this tenant (its own skills over the global ones);
                 without it, as a call without tenant_id (the unscoped skills)

Example client configuration (.mcp.json):
  { "mcpServers": { "car": { "command": "car", "args": ["mcp"] } } }`;

const PROPOSAL: JsonObject = {
  type: "object",
  description: "An Agent IR ActionProposal: { id?, source?, actions: [ { id, type, tool?, parameters?, ... } ], context? }",
  required: ["actions"],
  properties: { actions: { type: "array", items: { type: "object" } } },
};
const STATE: JsonObject = { type: "object", description: "A state map: key → JSON value" };

const STATELESS_TOOLS: ToolDefinition[] = [
  {
    name: "policy_check",
    description:
      "Evaluates a proposed tool call against CAR's policy layer before it runs: <CAR_HOME>/policies plus every .car/policies from the repository root down to cwd, and the built-in egress guard. Read `basis`, not only `decision`: no_rules_configured is an allow with nothing behind it; policy_load_failed denies. `answer` is deny, ask (a shell command the gate cannot prove safe: ask the user before running it) or none.",
    inputSchema: {
      type: "object",
      required: ["tool"],
      properties: {
        tool: { type: "string", minLength: 1, description: "The tool name as the host calls it (e.g. Bash, WebFetch, apply_patch)" },
        params: { type: "object", description: "The call's arguments" },
        cwd: { type: "string", description: "The working directory the call would run in (default: the server's)" },
      },
      additionalProperties: false,
    },
    run: (args) => {
      const cwd = typeof args["cwd"] === "string" ? resolve(args["cwd"]) : process.cwd();
      return policyCheck(args["tool"] as string, (args["params"] ?? {}) as JsonValue, cwd, { carHome: resolveCarHome() }) as unknown as JsonValue;
    },
  },
  {
    name: "verify",
    description:
      "Statically verifies a proposal: dependency cycles and unknown ids, preconditions that cannot hold, unavailable state dependencies, write conflicts, repeated identical calls, tools missing from `tools` and parameters that fail their schema, more than `max_actions` actions. Each issue carries a `tier`. No tool runs and no policy is read.",
    inputSchema: {
      type: "object",
      required: ["proposal"],
      properties: {
        proposal: PROPOSAL,
        initial_state: STATE,
        tools: {
          type: "array",
          description: "The tool registry: names or ToolSchemas",
          items: { anyOf: [{ type: "string" }, { type: "object", required: ["name"] }] },
        },
        max_actions: { type: "integer", minimum: 1, maximum: 1000 },
      },
      additionalProperties: false,
    },
    aliases: { state: "initial_state" },
    run: (args) => {
      // The pair, not the bare proposal: verify uses the graph the parse built instead of building it again.
      const proposal = parseProposalWithGraph(args["proposal"]);
      return verify(proposal, {
        ...(args["initial_state"] !== undefined ? { state: args["initial_state"] as JsonObject } : {}),
        ...(args["tools"] !== undefined ? { tools: args["tools"] as (string | { name: string })[] } : {}),
        ...(args["max_actions"] !== undefined ? { maxActions: args["max_actions"] as number } : {}),
      }) as unknown as JsonValue;
    },
  },
  {
    name: "simulate",
    description:
      "The state an executor would be left holding, from declared expected_effects only: a declared effect is assumed to land; an action whose preconditions or state dependencies cannot hold is skipped (listed in `skipped`, its dependants with it); failure_behavior is not modelled.",
    inputSchema: {
      type: "object",
      required: ["proposal"],
      properties: { proposal: PROPOSAL, initial_state: STATE },
      additionalProperties: false,
    },
    aliases: { state: "initial_state" },
    run: (args) => {
      const outcome = simulateDetailed(parseProposalWithGraph(args["proposal"]), (args["initial_state"] ?? {}) as JsonObject);
      return { state: outcome.state, skipped: outcome.skipped };
    },
  },
  {
    name: "optimize",
    description:
      "Rewrites a proposal to widen parallelism: state_dependencies naming keys no earlier action writes are pruned (kept as `exists` preconditions). Returns the proposal and `pruned` keys per action. Nothing is reordered or removed.",
    inputSchema: { type: "object", required: ["proposal"], properties: { proposal: PROPOSAL }, additionalProperties: false },
    run: (args) => {
      const before = parseProposal(args["proposal"]);
      const after = optimize(before);
      const pruned: JsonObject = {};
      before.actions.forEach((a, i) => {
        const kept = new Set(after.actions[i]!.state_dependencies);
        const dropped = a.state_dependencies.filter((k) => !kept.has(k));
        if (dropped.length > 0) setOwn(pruned, a.id, dropped);
      });
      return { proposal: serializeProposal(after), pruned };
    },
  },
  {
    name: "equivalent",
    description:
      'Whether two proposals leave the same state behind, by simulating both from each test state — sampled, not proven. Without test_states (or with []) the probes are {} and {"x": 1, "y": 2}. Names the first probe and key that differ.',
    inputSchema: {
      type: "object",
      required: ["proposal_a", "proposal_b"],
      properties: {
        proposal_a: PROPOSAL,
        proposal_b: PROPOSAL,
        test_states: { type: "array", maxItems: 256, items: STATE },
      },
      additionalProperties: false,
    },
    run: (args) => {
      const states = args["test_states"] as JsonObject[] | undefined;
      const usedDefaults = states === undefined || states.length === 0;
      const report = equivalentDetailed(parseProposal(args["proposal_a"]), parseProposal(args["proposal_b"]), usedDefaults ? undefined : states);
      // The reference's evidence fields: a sampled check, how many states it saw, and whether they were the defaults.
      return { ...report, tier: "sampled", states_tested: report.probes, used_default_states: usedDefaults } as unknown as JsonValue;
    },
  },
];

/**
 * The arguments under the names used here: an alias is renamed (both names
 * at once is an error), and an unknown key is an error that names it and
 * the accepted ones — the schema check alone would only say "must NOT have
 * additional properties".
 */
function argumentsOf(tool: ToolDefinition, args: unknown): unknown {
  if (!isJsonObject(args)) return args;
  const known = Object.keys(tool.inputSchema.properties);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(args)) {
    const name = tool.aliases !== undefined && hasKey(tool.aliases, key) ? tool.aliases[key]! : key;
    if (!known.includes(name)) {
      throw new CarError("invalid_params", `unknown argument '${key}' for ${tool.name}; it takes ${known.join(", ")}`, {
        problems: [{ pointer: `/${key}`, message: "unknown argument" }],
      });
    }
    if (hasKey(out, name))
      throw new CarError("invalid_params", `${tool.name}: '${key}' and '${name}' are the same argument; give one`, {
        problems: [{ pointer: `/${key}`, message: "duplicate argument" }],
      });
    setOwn(out, name, value);
  }
  return out;
}

function callTool(tools: readonly ToolDefinition[], name: string, args: unknown): CallToolResult {
  const tool = tools.find((t) => t.name === name);
  try {
    if (tool === undefined) throw new CarError("not_found", `unknown tool '${name}'; this server has ${tools.map((t) => t.name).join(", ")}`);
    const input = argumentsOf(tool, args ?? {});
    const check = compileSchema(tool.inputSchema)(input);
    if (!check.ok) {
      throw new CarError("invalid_params", `invalid arguments for ${name}: ${check.errors.map((e) => `${e.path || "/"} ${e.message}`).join("; ")}`, {
        problems: check.errors.map((e) => ({ pointer: e.path, message: e.message })),
      });
    }
    const result = tool.run(input as JsonObject);
    return { content: [{ type: "text", text: JSON.stringify(result, null, 2) }], structuredContent: result as Record<string, unknown> };
  } catch (err) {
    const error = toCarError(err);
    return { isError: true, content: [{ type: "text", text: JSON.stringify({ error: error.toJSON() }, null, 2) }] };
  }
}

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { tenant: { type: "string" } });
  expectPositionals(positionals, []);
  if (options.tenant === "") throw new CarError("invalid_params", "--tenant must name a tenant (leave it out for the unscoped skills)");
  const TOOLS = [...STATELESS_TOOLS, ...skillTools(resolveCarHome(), options.tenant)];
  const server = new Server({ name: "car", version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { title: t.name, ...(t.annotations ?? READ_ONLY_ANNOTATIONS) },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => callTool(TOOLS, request.params.name, request.params.arguments));
  const closed = new Promise<void>((done) => {
    server.onclose = done;
  });
  // Not the SDK's stdio transport: it ends the session on a line over 10 MiB; this one answers it and serves on.
  await server.connect(new LineTransport(process.stdin, process.stdout));
  process.stdin.once("end", () => void server.close());
  await closed;
  return 0;
}
