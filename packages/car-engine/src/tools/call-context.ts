/**
 * The `ctx` a tool handler receives. The AbortController and the request id
 * are created on first use: a synchronous no-op tool never touches them, and
 * at 100k actions that is most of the per-call cost avoided. Aborting before
 * the signal was ever read still works — the signal is then born aborted.
 */
import type { IdGenerator } from "@car/ir";
import type { ToolCallContext } from "./handler.ts";

const NOT_ABORTED: unique symbol = Symbol("not aborted");

export class CallContext implements ToolCallContext {
  readonly action_id: string;
  readonly attempt: number;
  readonly timeout_ms: number | null;
  readonly session_id: string | null;
  traceparent?: string;
  #ids: IdGenerator;
  #requestId: string | undefined;
  #controller: AbortController | undefined;
  /** Why it was aborted; `NOT_ABORTED` until then (one field, not a flag and a reason: 100k contexts can be alive at once). */
  #abortReason: unknown = NOT_ABORTED;

  constructor(action_id: string, attempt: number, timeout_ms: number | null, session_id: string | null, ids: IdGenerator) {
    this.action_id = action_id;
    this.attempt = attempt;
    this.timeout_ms = timeout_ms;
    this.session_id = session_id;
    this.#ids = ids;
  }

  get request_id(): string {
    return (this.#requestId ??= this.#ids.next());
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortReason !== NOT_ABORTED) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** The controller behind `signal` (created if needed), for detached invocations that outlive the call. */
  get controller(): AbortController {
    void this.signal;
    return this.#controller!;
  }

  /** Tells the tool to stop. Idempotent: the first reason wins. */
  abort(reason: unknown): void {
    if (this.#abortReason !== NOT_ABORTED) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }
}
