/**
 * The JSON Schema of an input proposal (`ActionProposalInput`) for a model's
 * structured-output mode. Unlike `schemas/action-proposal.json`, which
 * validates anything the wire accepts, this one steers a producer: one
 * self-contained document (local `$ref`s only), the keyword subset that
 * structured-output modes accept (no `if`/`then`, `pattern` or `format`;
 * `minimum` only), a description on every field, and closed objects for the
 * IR's own shapes so a model cannot invent fields. Free-form maps
 * (`parameters`, `expected_effects`, `metadata`, `context`) stay open: their
 * keys belong to the tools. `tool_call` is its own branch so `tool` is
 * required exactly there. Every shape it accepts parses (property-tested);
 * `parseProposal` still checks what a schema cannot — duplicate ids,
 * unknown dependencies, cycles — and fills in the defaults a model left out.
 */
import type { JsonObject } from "./types.ts";

const stringList = (description: string): JsonObject => ({ type: "array", items: { type: "string" }, description });
const freeMap = (description: string): JsonObject => ({ type: "object", description });

/** Every action field but `type` and `tool`, which the two branches set. */
const actionFields: JsonObject = {
  id: { type: "string", description: "Unique within the proposal; referenced by `dependencies` and `$<id>.output`. Generated when absent." },
  parameters: freeMap("Arguments passed verbatim to the tool; a whole-string value `$<id>.output[.field…]` is replaced by that dependency's output."),
  preconditions: {
    type: "array",
    description: "State predicates that must all hold before the action runs.",
    items: { $ref: "#/definitions/precondition" },
  },
  expected_effects: freeMap("State keys this action claims to set, with their values; verify and simulate model the action by them."),
  dependencies: stringList("Ids of actions that must complete first."),
  state_dependencies: stringList("State keys this action reads; it waits for the latest earlier action that writes each."),
  read_set: stringList("Explicit transactional read set; derived from state_dependencies when empty."),
  write_set: stringList("Explicit transactional write set; derived from expected_effects when empty."),
  assumptions: { type: "array", description: "Assumptions about shared state this action did not produce.", items: { $ref: "#/definitions/assumption" } },
  invocation_mode: { enum: ["one_shot", "streaming", "long_running"], description: "How a tool_call runs. Default one_shot." },
  reversibility: { enum: ["reversible", "compensable", "irreversible"], description: "Can the effect be undone? Default irreversible." },
  compensation: { $ref: "#/definitions/compensation" },
  idempotent: { type: "boolean", description: "Safe to repeat; enables result caching. Default false." },
  max_retries: { type: "integer", minimum: 0, description: "Retries when failure_behavior is retry. Default 3." },
  failure_behavior: { enum: ["abort", "retry", "skip"], description: "What a failure does. Default abort." },
  timeout_ms: { type: "integer", minimum: 0, description: "Tool-call timeout in milliseconds. Unbounded when absent." },
  metadata: freeMap("Not interpreted by the runtime."),
};

const toolCallAction: JsonObject = {
  type: "object",
  description: "An action that invokes a registered tool.",
  properties: {
    type: { enum: ["tool_call"] },
    tool: { type: "string", description: "Name of the registered tool." },
    ...actionFields,
  },
  required: ["type", "tool"],
  additionalProperties: false,
};

const otherAction: JsonObject = {
  type: "object",
  description: "A state_write ({key, value} parameters), state_read ({key}) or assertion (its preconditions must hold).",
  properties: {
    type: { enum: ["state_write", "state_read", "assertion"] },
    ...actionFields,
  },
  required: ["type"],
  additionalProperties: false,
};

export const proposalInputSchema: JsonObject = {
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "ActionProposalInput",
  description: "A plan as a DAG of typed actions for the Common Agent Runtime. Omitted fields take their documented defaults.",
  type: "object",
  properties: {
    id: { type: "string", description: "Generated when absent." },
    source: { type: "string", description: "Who produced this proposal (model id, agent name)." },
    actions: { type: "array", description: "The actions, in declaration order.", items: { $ref: "#/definitions/action" } },
    context: freeMap("Passed through to the event log; not interpreted."),
  },
  required: ["actions"],
  additionalProperties: false,
  definitions: {
    action: { anyOf: [toolCallAction, otherAction] },
    precondition: {
      type: "object",
      properties: {
        key: { type: "string", description: "State key the predicate reads." },
        operator: { enum: ["eq", "neq", "gt", "lt", "gte", "lte", "exists", "not_exists", "contains"], description: "Default eq." },
        value: { description: "The JSON value compared with; ignored by exists / not_exists. Default null." },
        description: { type: "string" },
      },
      required: ["key"],
      additionalProperties: false,
    },
    assumption: {
      type: "object",
      properties: {
        key: { type: "string" },
        expected_value: { description: "The value the action assumes the key holds." },
        read_version: { type: "integer", minimum: 0, description: "The state version the action read." },
      },
      required: ["key"],
      additionalProperties: false,
    },
    compensation: {
      description: "How to undo the action; meaningful when reversibility is compensable.",
      anyOf: [
        {
          type: "object",
          properties: { type: { enum: ["tool"] }, tool: { type: "string" }, parameters: freeMap("Arguments for the compensating tool.") },
          required: ["type", "tool"],
          additionalProperties: false,
        },
        {
          type: "object",
          properties: { type: { enum: ["action_ref"] }, action_id: { type: "string", description: "Id of another action of this proposal." } },
          required: ["type", "action_id"],
          additionalProperties: false,
        },
      ],
    },
  },
};
