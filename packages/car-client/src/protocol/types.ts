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

/**
 * Each method's types, computed per method as a map: a generic
 * `ParamsOf<M>` then only indexes the map, which keeps the type checker
 * from inferring every schema at once.
 */
type ParamsMap = { [M in MethodName]: Infer<Protocol[M]["params"]> };
type ResultMap = { [M in MethodName]: Infer<Protocol[M]["result"]> };
type Requests = typeof serverRequests;
type Notifications = typeof serverNotifications;
type RequestParamsMap = { [M in keyof Requests]: Infer<Requests[M]["params"]> };
type RequestResultMap = { [M in keyof Requests]: Infer<Requests[M]["result"]> };
type NotificationParamsMap = { [M in keyof Notifications]: Infer<Notifications[M]["params"]> };

/** What a method takes. */
export type ParamsOf<M extends MethodName> = ParamsMap[M];
/** What a method answers. */
export type ResultOf<M extends MethodName> = ResultMap[M];

export type RequestName = keyof Requests & string;
export type RequestParams<M extends RequestName> = RequestParamsMap[M];
export type RequestResult<M extends RequestName> = RequestResultMap[M];
export type NotificationName = keyof Notifications & string;
export type NotificationParams<M extends NotificationName> = NotificationParamsMap[M];

export type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;

/**
 * A typed call as one overload per method, built from the maps above
 * (params may be left out when the method requires none). Overloads, not a
 * generic `call<M>`: inferring M from the params would make the checker
 * infer every schema at once.
 */
export type TypedCall<Options> = UnionToIntersection<
  {
    [M in MethodName]: {} extends ParamsOf<M>
      ? (method: M, params?: ParamsOf<M>, options?: Options) => Promise<ResultOf<M>>
      : (method: M, params: ParamsOf<M>, options?: Options) => Promise<ResultOf<M>>;
  }[MethodName]
>;
