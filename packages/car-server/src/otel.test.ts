import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXPORT_TIMEOUT_MS } from "./otel.ts";
import { runServe } from "./serve-command.ts";
import { recordingServeIo, TestClient } from "../test/test-client.ts";

const SECRET = "otel-secret-param-value";

/** A stand-in OTLP/HTTP collector: keeps every JSON body POSTed to /v1/traces. */
let receiver: Server;
let endpoint: string;
const bodies: any[] = [];
let carHome: string;

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-otel-"));
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces" && req.method === "POST")
        bodies.push({ contentType: req.headers["content-type"], body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
});
afterAll(async () => {
  await new Promise((r) => receiver.close(r));
  await rm(carHome, { recursive: true, force: true });
});

const io = () => recordingServeIo(carHome);

type OtlpSpan = { name: string; traceId: string; spanId: string; parentSpanId?: string; attributes: { key: string; value: Record<string, unknown> }[] };
const attr = (s: OtlpSpan, key: string): unknown => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : Object.values(v)[0];
};

describe("car serve --otel", () => {
  it("exports proposal, action and tool-call spans over OTLP/HTTP, and hands the client the traceparent", async () => {
    const session = io();
    const running = runServe(["--port", "0", "--db", ":memory:", "--no-auth", "--otel", "--otel-endpoint", endpoint], session);
    await expect.poll(() => session.out.length).toBeGreaterThanOrEqual(1);
    const url = session.out[0]!.replace("car serve listening on ", "");
    const c = await TestClient.open(url, undefined);
    await c.result("tools.register", [{ name: "greet" }]);
    c.handle("tools.execute", () => ({ result: { hello: "world" } }));
    const result = await c.result("proposal.submit", {
      proposal: { id: "traced", actions: [{ id: "g", type: "tool_call", tool: "greet", parameters: { who: SECRET } }] },
    });
    expect(result.results[0].status).toBe("succeeded");
    const call = c.frames.find((f) => f.method === "tools.execute");
    expect(call.params.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    session.signal("SIGTERM");
    expect(await running).toBe(0);
    await c.closed;

    expect(bodies.length).toBeGreaterThan(0);
    expect(bodies[0].contentType).toContain("application/json");
    const spans: OtlpSpan[] = bodies.flatMap((b) => b.body.resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans)));
    const proposal = spans.find((s) => s.name === "car.proposal")!;
    const action = spans.find((s) => s.name === "car.action")!;
    const attempt = spans.find((s) => s.name === "car.tool_call")!;
    expect(attr(proposal, "car.proposal.id")).toBe("traced");
    expect(attr(action, "car.action.id")).toBe("g");
    expect(attr(action, "car.tool")).toBe("greet");
    expect(attr(action, "car.action.status")).toBe("succeeded");
    expect(action.parentSpanId).toBe(proposal.spanId);
    expect(attempt.parentSpanId).toBe(action.spanId);
    // The client was told the attempt span it runs under.
    expect(call.params.traceparent).toBe(`00-${attempt.traceId}-${attempt.spanId}-01`);
    expect(JSON.stringify(bodies)).not.toContain(SECRET);
  });

  it("with no collector listening, says so on the log and still shuts down within the export timeout", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const nowhere = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1/traces`;
    await new Promise((r) => closed.close(r));
    const session = io();
    const running = runServe(["--port", "0", "--db", ":memory:", "--no-auth", "--otel", "--otel-endpoint", nowhere], session);
    await expect.poll(() => session.out.length).toBeGreaterThanOrEqual(1);
    const c = await TestClient.open(session.out[0]!.replace("car serve listening on ", ""), undefined);
    await c.result("proposal.submit", { proposal: { actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] } });
    const stopping = performance.now();
    session.signal("SIGTERM");
    expect(await running).toBe(0);
    // The exporter's own default (10 s of retries) made this take over 10 s.
    expect(performance.now() - stopping).toBeLessThan(EXPORT_TIMEOUT_MS + 2_000);
    expect(session.err.some((l) => l.startsWith(`car serve: otel: cannot reach the collector at ${nowhere}`) && /\d+ spans dropped/.test(l))).toBe(true);
    await c.closed;
  }, 30_000);

  it("refuses --otel-endpoint without --otel, or one that is not an http URL", async () => {
    for (const args of [
      ["--otel-endpoint", endpoint],
      ["--otel", "--otel-endpoint", "ftp://x"],
    ]) {
      const bad = io();
      expect(await runServe(["--port", "0", ...args], bad)).toBe(2);
      expect(bad.err[0]).toMatch(/otel-endpoint/);
    }
  });
});
