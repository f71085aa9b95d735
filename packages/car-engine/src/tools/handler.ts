/**
 * What a tool implementation sees. Per-tool handlers are the idiomatic
 * TypeScript form; the seeds' single JSON-string callback (`ToolCallback`) is
 * offered beside them (DECISIONS.md §3).
 */
import type { JsonObject, ToolStreamChunk } from "@car/ir";

export interface ToolCallContext {
  /**
   * Aborted when the call's `timeout_ms` expires, when the proposal aborts,
   * or (detached calls) on `toolCancel`. Its `reason` says which. A result
   * that arrives after the abort is discarded.
   */
  readonly signal: AbortSignal;
  /** The originating action's id. */
  readonly action_id: string;
  /** Unique per call (per attempt): correlate cancellations by this. */
  readonly request_id: string;
  /** 1-based retry counter. */
  readonly attempt: number;
  /** The action's declared budget, or null when it declared none. */
  readonly timeout_ms: number | null;
  /** The execution session the proposal was submitted under, or null. */
  readonly session_id: string | null;
  /**
   * The W3C trace context of this attempt's span when the runtime traces
   * (OpenTelemetry), so a tool running elsewhere can parent its spans; an
   * in-process handler already runs inside the span.
   */
  readonly traceparent?: string;
}

/**
 * A tool implementation. Return the output (any JSON value; `undefined`
 * counts as `null`) or throw: a `TerminalToolError` is terminal, anything
 * else an ordinary failure. A detached tool (`streaming`) returns an async
 * iterable of chunks; a `long_running` one returns a promise of its result.
 */
export type ToolHandler = (params: JsonObject, ctx: ToolCallContext) => unknown;

/** The chunks a streaming tool yields. */
export type ToolChunkSource = AsyncIterable<ToolStreamChunk>;

/**
 * The seeds' callback contract: ONE JSON string
 * `{ tool, params, action_id, request_id, timeout_ms, session_id, attempt }`
 * in, a JSON string out. `{"error": "..."}` is an ordinary failure,
 * `{"error": "...", "terminal": true}` (or a thrown `TerminalToolError`) a
 * terminal one; output that is not JSON is a validation failure. The
 * optional `signal` is aborted when the engine gives up on the call, so a
 * transport can forward a cancellation (`tools.cancel`).
 */
export type ToolCallback = (callJson: string, signal: AbortSignal) => string | Promise<string>;
