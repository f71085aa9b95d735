/**
 * `car serve --otel`: an OpenTelemetry SDK that exports every session's
 * proposal, action and tool-call spans over OTLP/HTTP. The SDK is loaded only
 * when the flag is given, so a server without it pays nothing; the engine
 * itself depends on `@opentelemetry/api` alone.
 */
import type { Tracer } from "@opentelemetry/api";

export interface OtelExport {
  readonly tracer: Tracer;
  /** Flushes the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Starts exporting to `endpoint` (a full `/v1/traces` URL); without one the
 * exporter reads the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
 * `OTEL_EXPORTER_OTLP_ENDPOINT` variables, else it uses the collector's default
 * local address.
 */
export async function startOtelExport(endpoint: string | undefined): Promise<OtelExport> {
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
  ]);
  const exporter = new OTLPTraceExporter(endpoint === undefined ? {} : { url: endpoint });
  const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  // Registers the async-local context manager, so a proposal's spans nest across awaits.
  provider.register();
  return { tracer: provider.getTracer("car serve"), shutdown: () => provider.shutdown() };
}
