/**
 * OpenTelemetry spans for one proposal run, through `@opentelemetry/api`
 * only: the application chooses (or omits) the SDK and exporter.
 *
 *   car.proposal            one per executeProposal, child of the caller's active span
 *     car.action            one per action: id, tool, final status, policy decision,
 *                           retries, params_digest, error_class
 *       car.tool_call       one per dispatch attempt; the tool runs inside it, so the
 *                           tool's own spans nest under it
 *
 * Spans follow the run's audit events (`observe`), so tracing needs no
 * second set of hooks in the executor. A span leaves the process (an
 * exporter, a vendor), so it carries less than the audit log: ids, classes,
 * statuses, rule names — never a tool's error text, a precondition's
 * message or a state value, which can echo a parameter or a secret. Its
 * parameter digest is keyed (HMAC under the audit key, or a per-runtime key
 * without one): the log's `params_digest` is a plain SHA-256 of the
 * parameters, and a short secret (a PIN) is recovered from that in a few
 * thousand guesses. Tracing is off unless a `Tracer` is configured on the
 * Runtime; off, nothing here runs.
 */
import { createHmac, randomBytes } from "node:crypto";
import { SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
import { paramsDigest } from "@car/ir";
import type { Action, ActionProposal, JsonObject } from "@car/ir";
import type { CarEvent } from "../events/event.ts";
import { EVENT_KINDS } from "../events/event.ts";

/** Attribute names, in one place so dashboards and tests read the same words. */
export const TRACE_ATTRIBUTES = {
  proposalId: "car.proposal.id",
  proposalSource: "car.proposal.source",
  actionCount: "car.proposal.actions",
  outcome: "car.proposal.outcome",
  actionId: "car.action.id",
  actionType: "car.action.type",
  tool: "car.tool",
  status: "car.action.status",
  errorClass: "car.error_class",
  retries: "car.retries",
  paramsDigest: "car.params_digest",
  policyDecision: "car.policy.decision",
  policyRules: "car.policy.rules",
  attempt: "car.attempt",
  cached: "car.cached",
} as const;

/** What a run traces with: the application's tracer, and the key its parameter digests are keyed with. */
export interface TraceSettings {
  readonly tracer: Tracer;
  /** The span's digest of a `params_digest` (keyed: see above). */
  readonly digest: (paramsDigest: string) => string;
}

/** Trace settings over `tracer`, with digests keyed by `key` (the audit key's digest function), else by a fresh random key. */
export function traceSettings(tracer: Tracer, key?: (text: string) => string): TraceSettings {
  if (key !== undefined) return { tracer, digest: key };
  const secret = randomBytes(32);
  return { tracer, digest: (text) => createHmac("sha256", secret).update(text, "utf8").digest("hex") };
}

interface ActionSpan {
  span: Span;
  context: Context;
  attempts: number;
  denied: string[];
}

/** One dispatch attempt's span; the tool call runs inside `context`. */
export interface AttemptTrace {
  readonly context: Context;
  /** The W3C `traceparent` of the attempt span, for tools that run elsewhere. */
  readonly traceparent: string;
  /** `error`: the failure's class only travels (its message may echo what the tool was given). */
  end(error: { message: string; errorClass: string } | undefined): void;
}

export class RunTracer {
  readonly #tracer: Tracer;
  readonly #digest: (paramsDigest: string) => string;
  readonly #proposal: Span;
  readonly #proposalContext: Context;
  readonly #actions = new Map<string, Action>();
  readonly #open = new Map<string, ActionSpan>();

  constructor({ tracer, digest }: TraceSettings, proposal: ActionProposal) {
    this.#tracer = tracer;
    this.#digest = digest;
    this.#proposal = tracer.startSpan("car.proposal", {
      kind: SpanKind.INTERNAL,
      attributes: {
        [TRACE_ATTRIBUTES.proposalId]: proposal.id,
        [TRACE_ATTRIBUTES.proposalSource]: proposal.source,
        [TRACE_ATTRIBUTES.actionCount]: proposal.actions.length,
      },
    });
    this.#proposalContext = trace.setSpan(context.active(), this.#proposal);
    for (const action of proposal.actions) this.#actions.set(action.id, action);
  }

  /** Follows the run's audit events. */
  observe(event: CarEvent): void {
    const id = event.action_id;
    switch (event.kind) {
      case EVENT_KINDS.policyViolation:
        if (id !== undefined) this.#action(id).denied.push(String(event.data["policy_name"]));
        return;
      case EVENT_KINDS.actionStarted:
        if (id !== undefined) this.#action(id).span.setAttribute(TRACE_ATTRIBUTES.policyDecision, "allow");
        return;
      case EVENT_KINDS.actionSucceeded:
      case EVENT_KINDS.actionFailed:
      case EVENT_KINDS.actionRejected:
      case EVENT_KINDS.actionSkipped:
        if (id !== undefined) this.#endAction(id, event);
        return;
      case EVENT_KINDS.proposalCompleted:
        this.#completed(event.data);
        return;
    }
  }

  /** Starts the span of one dispatch attempt, under its action's span. */
  attempt(actionId: string, attempt: number): AttemptTrace {
    const parent = this.#action(actionId);
    parent.attempts = Math.max(parent.attempts, attempt);
    const action = this.#actions.get(actionId);
    const span = this.#tracer.startSpan(
      "car.tool_call",
      {
        kind: SpanKind.CLIENT,
        attributes: { [TRACE_ATTRIBUTES.actionId]: actionId, [TRACE_ATTRIBUTES.tool]: action?.tool ?? "", [TRACE_ATTRIBUTES.attempt]: attempt },
      },
      parent.context,
    );
    const sc = span.spanContext();
    return {
      context: trace.setSpan(parent.context, span),
      traceparent: `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`,
      end: (error) => {
        if (error !== undefined) {
          span.setAttribute(TRACE_ATTRIBUTES.errorClass, error.errorClass);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error.errorClass });
        }
        span.end();
      },
    };
  }

  #action(id: string): ActionSpan {
    let open = this.#open.get(id);
    if (open === undefined) {
      const action = this.#actions.get(id);
      const attributes: Attributes = { [TRACE_ATTRIBUTES.actionId]: id };
      if (action !== undefined) {
        attributes[TRACE_ATTRIBUTES.actionType] = action.type;
        if (action.tool !== undefined) attributes[TRACE_ATTRIBUTES.tool] = action.tool;
      }
      const span = this.#tracer.startSpan("car.action", { kind: SpanKind.INTERNAL, attributes }, this.#proposalContext);
      open = { span, context: trace.setSpan(this.#proposalContext, span), attempts: 0, denied: [] };
      this.#open.set(id, open);
    }
    return open;
  }

  #endAction(id: string, event: CarEvent): void {
    const open = this.#action(id);
    this.#open.delete(id);
    const { span } = open;
    const status = STATUS_OF[event.kind] ?? event.kind;
    span.setAttribute(TRACE_ATTRIBUTES.status, status);
    span.setAttribute(TRACE_ATTRIBUTES.retries, Math.max(0, open.attempts - 1));
    const digest = event.data["params_digest"];
    const action = this.#actions.get(id);
    const plain = typeof digest === "string" ? digest : action === undefined ? undefined : paramsDigest(action.parameters);
    if (plain !== undefined) span.setAttribute(TRACE_ATTRIBUTES.paramsDigest, this.#digest(plain));
    if (open.denied.length > 0) {
      span.setAttribute(TRACE_ATTRIBUTES.policyDecision, "deny");
      span.setAttribute(TRACE_ATTRIBUTES.policyRules, open.denied);
    }
    if (event.data["cached"] === true) span.setAttribute(TRACE_ATTRIBUTES.cached, true);
    const errorClass = event.data["error_class"];
    if (typeof errorClass === "string") span.setAttribute(TRACE_ATTRIBUTES.errorClass, errorClass);
    // The class or the status, never the error text or the rejection's reason (a precondition's "found …" names a state value).
    if (status === "failed" || status === "rejected")
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof errorClass === "string" ? errorClass : open.denied.length > 0 ? "policy_denied" : status });
    span.end();
  }

  /** Records the outcome (a refused commit completes a second time, rolled back: the last word wins). */
  #completed(data: JsonObject): void {
    for (const id of [...this.#open.keys()])
      this.#endAction(id, { kind: EVENT_KINDS.actionSkipped, proposal_id: null, timestamp: "", seq: 0, action_id: id, data: {} });
    const outcome = data["outcome"];
    if (typeof outcome === "string") {
      this.#proposal.setAttribute(TRACE_ATTRIBUTES.outcome, outcome);
      this.#proposal.setStatus(outcome === "committed" ? { code: SpanStatusCode.UNSET } : { code: SpanStatusCode.ERROR, message: outcome });
    }
  }

  /** Ends the proposal span once the run is over and its outcome committed. */
  end(): void {
    this.#proposal.end();
  }
}

const STATUS_OF: Readonly<Record<string, string>> = {
  [EVENT_KINDS.actionSucceeded]: "succeeded",
  [EVENT_KINDS.actionFailed]: "failed",
  [EVENT_KINDS.actionRejected]: "rejected",
  [EVENT_KINDS.actionSkipped]: "skipped",
};
