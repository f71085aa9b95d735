/**
 * The TypeScript types of the protocol, inferred from its JSON Schemas by
 * json-schema-to-ts: nothing here is written by hand but the map from an
 * IR shape's name to its @car/ir type.
 */
import type {
  ActionInput,
  ActionProposal,
  ActionProposalInput,
  AgentOutput,
  AgentSpec,
  CostBudget,
  CostTarget,
  ProposalResult,
  ToolHandle,
  ToolPollResult,
  ToolSchema,
  ToolSchemaInput,
  ToolStreamEvent,
  TraceEvent,
  VerificationResult,
} from "@car/ir";
import type { FromSchema } from "json-schema-to-ts";
import type { serverNotifications, serverRequests } from "./callbacks.ts";
import type { PROTOCOL } from "./index.ts";

type Shape<N extends string, T> = { pattern: { title: N }; output: T };

/** Each `ir(name)` schema reads as its @car/ir type. */
type IrShapes = [
  Shape<"ActionProposalInput", ActionProposalInput>,
  Shape<"ActionProposal", ActionProposal>,
  Shape<"ProposalResult", ProposalResult>,
  Shape<"VerificationResult", VerificationResult>,
  Shape<"ToolSchema", ToolSchema>,
  Shape<"ToolSchemaInput", ToolSchemaInput>,
  Shape<"ToolPollResult", ToolPollResult>,
  Shape<"ToolHandle", ToolHandle>,
  Shape<"ToolStreamEvent", ToolStreamEvent>,
  Shape<"AgentSpec", AgentSpec>,
  Shape<"AgentOutput", AgentOutput>,
  Shape<"CostTarget", CostTarget>,
  Shape<"CostBudget", CostBudget>,
  Shape<"ActionInput", ActionInput>,
  Shape<"TraceEvent", TraceEvent>,
];

type Infer<S> = FromSchema<S & object, { deserialize: IrShapes }>;

type Protocol = typeof PROTOCOL;
export type MethodName = keyof Protocol & string;
/** What a method takes. */
export type ParamsOf<M extends MethodName> = Infer<Protocol[M]["params"]>;
/** What a method answers. */
export type ResultOf<M extends MethodName> = Infer<Protocol[M]["result"]>;

export type RequestName = keyof typeof serverRequests & string;
export type RequestParams<M extends RequestName> = Infer<(typeof serverRequests)[M]["params"]>;
export type RequestResult<M extends RequestName> = Infer<(typeof serverRequests)[M]["result"]>;
export type NotificationName = keyof typeof serverNotifications & string;
export type NotificationParams<M extends NotificationName> = Infer<(typeof serverNotifications)[M]["params"]>;
