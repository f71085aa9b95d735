/**
 * `car serve --otel`: an OpenTelemetry SDK that exports every session's
 * proposal, action and tool-call spans over OTLP/HTTP. The SDK is loaded only
 * when the flag is given, so a server without it pays nothing; the engine
 * itself depends on `@opentelemetry/api` alone.
 *
 * A collector that is not there must not hold the server: each export gives
 * up after `EXPORT_TIMEOUT_MS` (the exporter's default, 10 s of retries, made
 * a shutdown with no collector take that long), and a failed export is said
 * on the server log once — then again only after an export has succeeded —
 * so spans are never dropped silently.
 */
import type { Tracer } from "@opentelemetry/api";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-node";

/** How long one export (with the exporter's retries) may take; the final flush at shutdown is bounded by it. */
export const EXPORT_TIMEOUT_MS = 2_000;

export interface OtelExport {
  readonly tracer: Tracer;
  /** Where the spans go (the resolved OTLP/HTTP traces URL), for the log. */
  readonly endpoint: string;
  /** Flushes the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/** The traces URL the exporter will use: the flag, else the standard variables, else the collector's local default. */
export function otelEndpoint(endpoint: string | undefined, env: NodeJS.ProcessEnv): string {
  if (endpoint !== undefined) return endpoint;
  const traces = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"];
  if (traces !== undefined && traces !== "") return traces;
  const base = env["OTEL_EXPORTER_OTLP_ENDPOINT"];
  if (base !== undefined && base !== "") return `${base.replace(/\/+$/, "")}/v1/traces`;
  return "http://localhost:4318/v1/traces";
}

/**
 * Starts exporting to `endpoint` (a full `/v1/traces` URL); without one the
 * exporter reads the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
 * `OTEL_EXPORTER_OTLP_ENDPOINT` variables, else it uses the collector's default
 * local address. `log` hears each run of failed exports.
 */
export async function startOtelExport(endpoint: string | undefined, log: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<OtelExport> {
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
  ]);
  const url = otelEndpoint(endpoint, env);
  const exporter = new OTLPTraceExporter({ ...(endpoint === undefined ? {} : { url: endpoint }), timeoutMillis: EXPORT_TIMEOUT_MS });
  const provider = new NodeTracerProvider({
    spanProcessors: [new BatchSpanProcessor(reportingExporter(exporter, url, log), { exportTimeoutMillis: EXPORT_TIMEOUT_MS })],
  });
  // Registers the async-local context manager, so a proposal's spans nest across awaits.
  provider.register();
  return {
    tracer: provider.getTracer("car serve"),
    endpoint: url,
    // The final flush failing must not turn a clean stop into a crash: it is said, and the server stops.
    shutdown: () =>
      provider
        .shutdown()
        .catch((error: unknown) => log(`otel: the last spans were not delivered to ${url}: ${error instanceof Error ? error.message : String(error)}`)),
  };
}

/** `exporter`, saying on `log` when an export fails (once per run of failures), with how many spans it dropped. */
function reportingExporter(exporter: SpanExporter, url: string, log: (line: string) => void): SpanExporter {
  let failing = false;
  return {
    export(spans: ReadableSpan[], done) {
      exporter.export(spans, (result) => {
        // ExportResultCode.SUCCESS is 0 (@opentelemetry/core), not imported for one constant.
        if (result.code === 0) failing = false;
        else if (!failing) {
          failing = true;
          log(
            `otel: cannot reach the collector at ${url} (${result.error?.message ?? "export failed"}): ${spans.length} spans dropped; later failures are not repeated until an export succeeds`,
          );
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
