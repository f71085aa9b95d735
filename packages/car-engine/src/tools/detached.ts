/**
 * Detached tool invocations (`invocation_mode` `streaming` / `long_running`).
 * Dispatch starts the tool and hands back a handle; the chunks it produces
 * are buffered per handle (drained by `poll`) and fanned out live to
 * subscribers. The buffer keeps at most `BUFFER_CAP` undrained chunks,
 * dropping the oldest and reporting how many on the next poll. A terminal
 * status is observable once through `poll`, after which the handle is
 * consumed.
 */
import type { JsonValue, ToolHandle, ToolPollResult, ToolStatus, ToolStreamChunk, ToolStreamEvent } from "@car/ir";
import { AsyncQueue } from "../async-queue.ts";
import { failureFrom } from "./action-failure.ts";

export const BUFFER_CAP = 1024;

/** A poll result with the count of chunks dropped from a full buffer since the last poll, when any were. */
export type DetachedPollResult = ToolPollResult & { dropped_chunks?: number };

interface Invocation {
  handle: ToolHandle;
  tool: string;
  action_id: string;
  status: ToolStatus;
  chunks: ToolStreamChunk[];
  dropped: number;
  result?: JsonValue;
  error?: string;
  controller: AbortController;
  /** Told once, when the invocation's final result is a success. */
  onSuccess?: () => void;
}

interface Subscription {
  handle: string | undefined;
  queue: AsyncQueue<ToolStreamEvent>;
}

/** Turns a produced value into a chunk, or says why it is not one. */
export type ChunkCheck = (value: unknown) => { ok: true; chunk: ToolStreamChunk } | { ok: false; message: string };

export class DetachedInvocations {
  readonly #live = new Map<string, Invocation>();
  readonly #subscriptions = new Set<Subscription>();
  readonly #checkChunk: ChunkCheck;

  constructor(checkChunk: ChunkCheck) {
    this.#checkChunk = checkChunk;
  }

  /** Starts draining a streaming tool's chunks under `handle`. */
  startStream(id: string, tool: string, action_id: string, controller: AbortController, source: AsyncIterable<unknown>): void {
    const inv = this.#register(id, tool, action_id, controller);
    void this.#pump(inv, source);
  }

  /** Tracks a long-running tool's promise under `handle`: it ends in one `done` or `error` chunk. */
  startTask(id: string, tool: string, action_id: string, controller: AbortController, task: Promise<unknown>, toResult: (value: unknown) => JsonValue): void {
    const inv = this.#register(id, tool, action_id, controller);
    task.then(
      (value) => {
        let result: JsonValue;
        try {
          result = toResult(value);
        } catch (error) {
          this.#emit(inv, { kind: "error", message: messageOf(error) });
          return;
        }
        this.#emit(inv, { kind: "done", result });
      },
      (error: unknown) => this.#emit(inv, { kind: "error", message: messageOf(error) }),
    );
  }

  poll(id: string): DetachedPollResult | null {
    const inv = this.#live.get(id);
    if (inv === undefined) return null;
    const out: DetachedPollResult = { handle: { id }, tool: inv.tool, action_id: inv.action_id, status: inv.status, chunks: inv.chunks };
    inv.chunks = [];
    if (inv.dropped > 0) out.dropped_chunks = inv.dropped;
    inv.dropped = 0;
    if (inv.result !== undefined) out.result = inv.result;
    if (inv.error !== undefined) out.error = inv.error;
    if (inv.status !== "running") this.#live.delete(id);
    return out;
  }

  /** Cooperative cancel: aborts the tool's signal and seals the handle `cancelled` unless already terminal. */
  cancel(id: string): boolean {
    const inv = this.#live.get(id);
    if (inv === undefined) return false;
    if (inv.status === "running") {
      inv.status = "cancelled";
      inv.controller.abort(new Error(`tool invocation ${id} cancelled`));
      this.#endSubscriptionsFor(id);
    }
    return true;
  }

  /**
   * Live chunks as `{ handle, chunk }` events: of one handle (starting with
   * its undrained buffer, ending at its terminal chunk or cancellation), or
   * of every invocation when `handle` is omitted.
   */
  subscribe(id?: string, signal?: AbortSignal): AsyncIterableIterator<ToolStreamEvent> {
    const sub: Subscription = {
      handle: id,
      queue: new AsyncQueue<ToolStreamEvent>(() => {
        this.#subscriptions.delete(sub);
        signal?.removeEventListener("abort", stop);
      }),
    };
    const stop = (): void => sub.queue.end();
    if (id !== undefined) {
      const inv = this.#live.get(id);
      if (inv === undefined) {
        sub.queue.end();
        return sub.queue;
      }
      for (const chunk of inv.chunks) sub.queue.push({ handle: inv.handle, chunk });
      if (inv.status !== "running") {
        sub.queue.end();
        return sub.queue;
      }
    }
    if (signal?.aborted) sub.queue.end();
    else {
      this.#subscriptions.add(sub);
      signal?.addEventListener("abort", stop, { once: true });
    }
    return sub.queue;
  }

  /**
   * Calls `fn` once the invocation ends in success (at once if it already
   * has); never when it fails or is cancelled. A detached call counts as
   * succeeded for trace rules only then, not when it starts (DECISIONS §21).
   */
  onSuccess(id: string, fn: () => void): void {
    const inv = this.#live.get(id);
    if (inv === undefined) return;
    if (inv.status === "succeeded") fn();
    else if (inv.status === "running") inv.onSuccess = fn;
  }

  /** Cancels every running invocation and ends every feed (runtime shutdown). */
  close(): void {
    for (const id of [...this.#live.keys()]) this.cancel(id);
    for (const sub of [...this.#subscriptions]) sub.queue.end();
  }

  #register(id: string, tool: string, action_id: string, controller: AbortController): Invocation {
    const inv: Invocation = { handle: { id }, tool, action_id, status: "running", chunks: [], dropped: 0, controller };
    this.#live.set(id, inv);
    return inv;
  }

  async #pump(inv: Invocation, source: AsyncIterable<unknown>): Promise<void> {
    let iterator: AsyncIterator<unknown> | undefined;
    try {
      iterator = source[Symbol.asyncIterator]();
      while (inv.status === "running") {
        const step = await iterator.next();
        if (inv.status !== "running") break;
        if (step.done === true) {
          this.#emit(inv, { kind: "done" });
          break;
        }
        const checked = this.#checkChunk(step.value);
        this.#emit(inv, checked.ok ? checked.chunk : { kind: "error", message: checked.message });
      }
    } catch (error) {
      this.#emit(inv, { kind: "error", message: messageOf(error) });
    }
    // A cancelled or finished stream is told to stop producing.
    if (iterator?.return !== undefined) {
      try {
        await iterator.return();
      } catch {
        // The stream is over either way; a failing cleanup changes nothing observable.
      }
    }
  }

  /** Buffers and fans out one chunk; a terminal chunk seals the invocation. */
  #emit(inv: Invocation, chunk: ToolStreamChunk): void {
    if (inv.status !== "running") return;
    inv.chunks.push(chunk);
    if (inv.chunks.length > BUFFER_CAP) {
      inv.chunks.shift();
      inv.dropped++;
    }
    if (chunk.kind === "done") {
      inv.status = "succeeded";
      if (chunk.result !== undefined) inv.result = chunk.result;
      inv.onSuccess?.();
    } else if (chunk.kind === "error") {
      inv.status = "failed";
      inv.error = chunk.message;
    }
    const event: ToolStreamEvent = { handle: inv.handle, chunk };
    for (const sub of this.#subscriptions) if (sub.handle === undefined || sub.handle === inv.handle.id) sub.queue.push(event);
    if (inv.status !== "running") this.#endSubscriptionsFor(inv.handle.id);
  }

  #endSubscriptionsFor(id: string): void {
    for (const sub of [...this.#subscriptions]) if (sub.handle === id) sub.queue.end();
  }
}

function messageOf(error: unknown): string {
  return failureFrom(error).message;
}
