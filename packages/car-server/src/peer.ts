/**
 * The server→client half of a connection: requests the server sends to the
 * client (`tools.execute`, `multi.run_agent`) and the notifications it pushes
 * (`tools.cancel`, `tools.stream.event`). Outbound requests are matched to the
 * client's responses by id; a caller bounds the wait with an AbortSignal, so
 * timeouts and cancellation live with the caller that knows what they mean.
 */
import type { JsonValue } from "@car/ir";
import type { RpcErrorObject, RpcId } from "./jsonrpc.ts";

/** The client answered a server→client request with a JSON-RPC error. */
export class ClientCallError extends Error {
  override readonly name: string = "ClientCallError";
  constructor(readonly error: RpcErrorObject) {
    super(error.message);
  }
}

interface Pending {
  resolve(value: JsonValue): void;
  reject(reason: unknown): void;
  /** Told the size of the frame that carried the answer, as it came off the socket. */
  received: ((bytes: number) => void) | undefined;
}

export class RpcPeer {
  private readonly pending = new Map<string, Pending>();
  private closedReason: Error | undefined;

  constructor(private readonly write: (frame: object) => void) {}

  notify(method: string, params: JsonValue): void {
    if (this.closedReason === undefined) this.write({ jsonrpc: "2.0", method, params });
  }

  /** Whether an outbound request with this id is still waiting for its answer. */
  has(id: string): boolean {
    return this.pending.has(id);
  }

  /**
   * Sends a request to the client and resolves with its `result`. Rejects with
   * `ClientCallError` on an error response, with `signal.reason` when the
   * signal fires first, or with the close reason when the connection ends.
   * `received` learns how many bytes the answer's frame had on the socket.
   */
  call(method: string, params: JsonValue, id: string, signal?: AbortSignal, received?: (bytes: number) => void): Promise<JsonValue> {
    if (this.closedReason !== undefined) return Promise.reject(this.closedReason);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<JsonValue>((resolve, reject) => {
      if (signal === undefined) {
        this.pending.set(id, { resolve, reject, received });
        this.write({ jsonrpc: "2.0", method, params, id });
        return;
      }
      const onAbort = (): void => {
        this.pending.delete(id);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.pending.set(id, {
        resolve: (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
        reject: (reason) => {
          signal.removeEventListener("abort", onAbort);
          reject(reason);
        },
        received,
      });
      this.write({ jsonrpc: "2.0", method, params, id });
    });
  }

  /**
   * Gives up on the outbound request `id`: its `call` rejects with `reason`
   * and a late answer is dropped. False when nothing waits under that id
   * (answered, abandoned, or the connection closed). Cheaper than a signal
   * for a caller that already knows when to stop.
   */
  abandon(id: string, reason: unknown): boolean {
    const entry = this.pending.get(id);
    if (entry === undefined) return false;
    this.pending.delete(id);
    entry.reject(reason);
    return true;
  }

  /**
   * Routes a client response; false when no request of ours carries that id
   * (it is dropped). `frameBytes` is the size of the frame it arrived in.
   */
  settle(id: RpcId, result: JsonValue | undefined, error: RpcErrorObject | undefined, frameBytes = 0): boolean {
    const key = id === null ? undefined : String(id);
    const entry = key === undefined ? undefined : this.pending.get(key);
    if (key === undefined || entry === undefined) return false;
    this.pending.delete(key);
    entry.received?.(frameBytes);
    if (error !== undefined) entry.reject(new ClientCallError(error));
    else entry.resolve(result ?? null);
    return true;
  }

  /** Fails every outstanding request and refuses new ones: the connection is gone. */
  close(reason: Error): void {
    this.closedReason = reason;
    const entries = [...this.pending.values()];
    this.pending.clear();
    for (const entry of entries) entry.reject(reason);
  }
}
