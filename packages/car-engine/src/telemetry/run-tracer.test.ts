import { context } from "@opentelemetry/api";
import type { Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createHmac } from "node:crypto";
import { paramsDigest } from "@car/ir";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { inMemoryStore, Runtime, TRACE_ATTRIBUTES as A } from "../index.ts";
import { checkpointKey, outboundDigest } from "../durable/index.ts";

const SECRET = "hunter2-never-in-a-span";
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer: Tracer = provider.getTracer("car-test");
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  contextManager.disable();
  context.disable();
});
beforeEach(() => exporter.reset());

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((s) => s.name === name);
const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;
const byAction = (name: string, id: string): ReadableSpan[] => named(name).filter((s) => s.attributes[A.actionId] === id);

describe("OpenTelemetry traces", () => {
  it("draws proposal → action → attempt spans with ids, tools, statuses, retries and digests, never raw values", async () => {
    const rt = new Runtime({ tracer });
    let calls = 0;
    rt.registerTool("fetch", () => ({ body: "ok" }));
    rt.registerTool("flaky", async () => {
      if (++calls === 1) throw new Error("transient");
      return { done: true };
    });
    const params = { url: "https://example.com", token: SECRET };
    const result = await rt.executeProposal({
      id: "p1",
      actions: [
        { id: "a", type: "tool_call", tool: "fetch", parameters: params },
        { id: "b", type: "tool_call", tool: "flaky", parameters: { token: SECRET }, dependencies: ["a"], failure_behavior: "retry", max_retries: 2 },
      ],
    });
    expect(result.results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);

    const [proposal] = named("car.proposal");
    expect(proposal).toBeDefined();
    expect(proposal!.attributes).toMatchObject({ [A.proposalId]: "p1", [A.actionCount]: 2, [A.outcome]: "committed" });
    expect(parentOf(proposal!)).toBeUndefined();

    const [a] = byAction("car.action", "a");
    const [b] = byAction("car.action", "b");
    for (const s of [a!, b!]) expect(parentOf(s)).toBe(proposal!.spanContext().spanId);
    expect(a!.attributes).toMatchObject({
      [A.tool]: "fetch",
      [A.status]: "succeeded",
      [A.retries]: 0,
      [A.policyDecision]: "allow",
    });
    // The span's digest is keyed: not the log's plain params_digest, which a short secret is guessed back from.
    expect(a!.attributes[A.paramsDigest]).toMatch(/^[0-9a-f]{64}$/);
    expect(a!.attributes[A.paramsDigest]).not.toBe(paramsDigest(params));
    expect(b!.attributes).toMatchObject({ [A.tool]: "flaky", [A.status]: "succeeded", [A.retries]: 1 });

    const attempts = byAction("car.tool_call", "b").sort((x, y) => Number(x.attributes[A.attempt]) - Number(y.attributes[A.attempt]));
    expect(attempts.map((s) => s.attributes[A.attempt])).toEqual([1, 2]);
    for (const s of attempts) expect(parentOf(s)).toBe(b!.spanContext().spanId);
    // The class travels, not the error's text (it may echo what the tool was given).
    expect(attempts[0]!.status).toMatchObject({ code: 2, message: "tool_error" });
    expect(attempts[0]!.attributes[A.errorClass]).toBe("tool_error");
    expect(attempts[1]!.status.code).not.toBe(2);
    // Every span is in one trace, and no attribute carries a parameter value.
    expect(new Set(spans().map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain(SECRET);
  });

  it("carries no tool error text, precondition message or state value; the log keeps them and the plain params_digest", async () => {
    const rt = new Runtime({ tracer });
    rt.state.set("pin", `pin-${SECRET}`);
    rt.registerTool("login", (p) => {
      throw new Error(`wrong pin ${String(p["pin"])}`);
    });
    rt.registerTool("read");
    const r = await rt.executeProposal(
      {
        actions: [
          { id: "l", type: "tool_call", tool: "login", parameters: { pin: SECRET }, failure_behavior: "skip" },
          { id: "g", type: "tool_call", tool: "read", preconditions: [{ key: "pin", operator: "eq", value: "1234" }], failure_behavior: "skip" },
        ],
      },
      async () => "{}",
    );
    expect(r.results.map((x) => x.status)).toEqual(["skipped", "rejected"]);
    // What the log and the result say (the operator's record) ...
    expect(r.results[0]!.error).toContain(SECRET);
    expect(r.results[1]!.error).toContain(SECRET);
    // ... no span carries: not in attributes, status messages or events.
    const exported = JSON.stringify(spans().map((x) => [x.attributes, x.status, x.events]));
    expect(exported).not.toContain(SECRET);
    expect(byAction("car.tool_call", "l")[0]!.status).toMatchObject({ code: 2, message: "tool_error" });
    expect(byAction("car.action", "g")[0]!.status).toMatchObject({ code: 2, message: "rejected" });
    const digests = rt.events.query({ kinds: ["action_succeeded", "action_failed", "action_rejected"] }).map((e) => e.data["params_digest"]);
    expect(digests).toContain(paramsDigest({ pin: SECRET }));
    expect(JSON.stringify(spans().map((x) => x.attributes))).not.toContain(paramsDigest({ pin: SECRET }));
  });

  it("keys a span's parameter digest with the store's audit key when it has one, and per runtime otherwise", async () => {
    const key = checkpointKey(Buffer.alloc(32, 7));
    const keyed = Object.assign(inMemoryStore(), { keyedDigest: (text: string) => outboundDigest(key, text) });
    const params = { pin: "0420" };
    const run = async (rt: Runtime): Promise<unknown> => {
      exporter.reset();
      rt.registerTool("t", () => "ok");
      await rt.executeProposal({ actions: [{ id: "t", type: "tool_call", tool: "t", parameters: params }] });
      return byAction("car.action", "t")[0]!.attributes[A.paramsDigest];
    };
    const withKey = await run(new Runtime({ tracer, store: keyed }));
    expect(withKey).toBe(
      createHmac("sha256", key.key)
        .update(`car.outbound\n${paramsDigest(params)}`)
        .digest("hex"),
    );
    const first = await run(new Runtime({ tracer }));
    const second = await run(new Runtime({ tracer }));
    expect(first).not.toBe(second);
    expect([first, second]).not.toContain(paramsDigest(params));
  });

  it("nests a tool's own spans under its attempt and the proposal under the caller's span", async () => {
    const rt = new Runtime({ tracer });
    rt.registerTool("work", async () => {
      await new Promise((r) => setTimeout(r, 1));
      return tracer.startActiveSpan("inner-db-query", (span) => {
        span.end();
        return { rows: 1 };
      });
    });
    await tracer.startActiveSpan("http-request", async (outer) => {
      await rt.executeProposal({ actions: [{ id: "w", type: "tool_call", tool: "work" }] });
      outer.end();
    });
    const [outer] = named("http-request");
    const [proposal] = named("car.proposal");
    const [attempt] = named("car.tool_call");
    const [inner] = named("inner-db-query");
    expect(parentOf(proposal!)).toBe(outer!.spanContext().spanId);
    expect(parentOf(inner!)).toBe(attempt!.spanContext().spanId);
  });

  it("records a policy denial on the action span, with no attempt", async () => {
    const rt = new Runtime({ tracer });
    rt.registerTool("shell");
    rt.registerPolicy({ name: "no_rm", rule: "deny_tool_param", target: "shell", key: "command", pattern: "rm -rf" });
    const r = await rt.executeProposal(
      { actions: [{ id: "s", type: "tool_call", tool: "shell", parameters: { command: `rm -rf / ${SECRET}` } }] },
      async () => "{}",
    );
    expect(r.results[0]!.status).toBe("rejected");
    const [s] = byAction("car.action", "s");
    expect(s!.attributes).toMatchObject({ [A.status]: "rejected", [A.policyDecision]: "deny", [A.policyRules]: ["no_rm"] });
    expect(s!.status.code).toBe(2);
    expect(named("car.tool_call")).toHaveLength(0);
    expect(named("car.proposal")[0]!.attributes[A.outcome]).toBe("rolled_back");
    expect(JSON.stringify(spans().map((x) => [x.attributes, x.status]))).not.toContain(SECRET);
  });

  it("puts the attempt's W3C traceparent into the JSON callback envelope", async () => {
    const rt = new Runtime({ tracer });
    rt.registerTool("remote");
    const seen: string[] = [];
    await rt.executeProposal({ actions: [{ id: "r", type: "tool_call", tool: "remote" }] }, async (callJson) => {
      seen.push(JSON.parse(callJson).traceparent);
      return "{}";
    });
    const [attempt] = named("car.tool_call");
    const sc = attempt!.spanContext();
    expect(seen).toEqual([`00-${sc.traceId}-${sc.spanId}-01`]);
  });

  it("is off unless a tracer is configured: no spans, no traceparent", async () => {
    const rt = new Runtime();
    rt.registerTool("remote");
    const seen: unknown[] = [];
    await rt.executeProposal({ actions: [{ id: "r", type: "tool_call", tool: "remote" }] }, async (callJson) => {
      seen.push(JSON.parse(callJson).traceparent);
      return "{}";
    });
    expect(seen).toEqual([undefined]);
    expect(spans()).toHaveLength(0);
  });
});
