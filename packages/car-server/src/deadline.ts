/**
 * Handler deadlines (reference § A.4): a request whose handler runs past its
 * deadline is answered `-32004` — the operation may still commit, so the
 * client consults the method's authoritative read before retrying. Most
 * methods take a flat, generous deadline (30 minutes, `CAR_HANDLER_TIMEOUT`
 * seconds to change it); `proposal.submit` takes one derived from the
 * proposal's own budgets: over its actions, `timeout_ms` (else the tool
 * timeout) times the attempts it may run (`max_retries + 1` for
 * `failure_behavior: "retry"`, else one), plus a 15-second transport grace.
 */
import { getOwn, isJsonObject, type JsonValue, ACTION_DEFAULTS } from "@car/ir";
import { RpcFault } from "./jsonrpc.ts";

export const RPC_HANDLER_DEADLINE = -32004;
export const DEFAULT_HANDLER_TIMEOUT_MS = 30 * 60 * 1000;
const TRANSPORT_GRACE_MS = 15_000;

/** The deadline of `proposal.submit` for `params`, or undefined when its proposal is not readable (its handler refuses it at once). */
function proposalDeadlineMs(params: JsonValue | undefined, toolTimeoutMs: number): number | undefined {
  const proposal = isJsonObject(params) ? getOwn(params, "proposal") : undefined;
  const actions = isJsonObject(proposal) ? getOwn(proposal, "actions") : undefined;
  if (!Array.isArray(actions)) return undefined;
  let total = TRANSPORT_GRACE_MS;
  for (const action of actions) {
    if (!isJsonObject(action)) continue;
    const timeout = typeof action["timeout_ms"] === "number" && action["timeout_ms"] > 0 ? action["timeout_ms"] : toolTimeoutMs;
    const retries = typeof action["max_retries"] === "number" && action["max_retries"] >= 0 ? action["max_retries"] : ACTION_DEFAULTS.max_retries;
    total += timeout * (action["failure_behavior"] === "retry" ? retries + 1 : 1);
  }
  return total;
}

/** How long `method`'s handler may run for `params`. */
export function handlerDeadlineMs(method: string, params: JsonValue | undefined, flatMs: number, toolTimeoutMs: number): number {
  if (method === "proposal.submit") return proposalDeadlineMs(params, toolTimeoutMs) ?? flatMs;
  return flatMs;
}

/** `work`, or a -32004 refusal once `ms` pass first (the work itself runs on; only its answer is replaced). */
export function withDeadline<T>(method: string, ms: number, work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        new RpcFault(
          RPC_HANDLER_DEADLINE,
          `handler deadline exceeded: ${method} ran past ${Math.ceil(ms / 1000)}s; it may still complete, so read its outcome before retrying`,
        ),
      );
    }, ms);
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
