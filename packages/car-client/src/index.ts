/**
 * `@car/client`: a typed Node client for `car serve`. Connect (token,
 * handshake), call every method with the types its declaration gives it,
 * answer the server's callbacks, cancel and time out calls; a JSON-RPC error
 * arrives as a `CarError` whose code comes from @car/ir's one table.
 */
export {
  CarClient,
  NO_ANSWER,
  RawResult,
  type CallOptions,
  type ConnectOptions,
  type HandshakeOptions,
  type NotificationHandler,
  type RequestContext,
  type RequestHandler,
  type RpcId,
} from "./client.ts";
export { CarRpcError, ReplyError, replyFor, type RpcErrorObject } from "./rpc-error.ts";
export { PROTOCOL, PROTOCOL_VERSION } from "./protocol/index.ts";
export type { MethodName, NotificationName, NotificationParams, ParamsOf, RequestName, RequestParams, RequestResult, ResultOf } from "./protocol/types.ts";
