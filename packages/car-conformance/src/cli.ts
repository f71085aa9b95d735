#!/usr/bin/env node
/**
 * `car-conformance`: run RuntimeBench against a runtime — a WebSocket server
 * (`--ws`, optionally started by `--cmd`) or `@car/engine` in process
 * (`--engine`). Prints progress and a per-capability summary, writes
 * `--json` / `--junit` reports, and exits 1 when a required capability fails
 * (2 for bad usage or a server that would not start).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RuntimeFactory } from "./adapter.ts";
import { parseCliArgs, USAGE, type CliArgs } from "./cli-args.ts";
import { engineAdapter } from "./engine-adapter.ts";
import { formatHuman } from "./format-human.ts";
import { formatJunit } from "./format-junit.ts";
import { loadCapabilities } from "./load-scenarios.ts";
import { knownFeatures, runConformance, type ProgressEvent } from "./run-conformance.ts";
import { spawnServer, type SpawnedServer } from "./spawn-server.ts";
import { wsAdapter } from "./ws-adapter.ts";

function progressPrinter(stream: NodeJS.WriteStream): (e: ProgressEvent) => void {
  const tty = stream.isTTY === true;
  return (e) => {
    if (e.type === "capability") {
      if (!tty) stream.write(`${e.capability} (${e.required ? "required" : "optional"}): ${e.scenarios} scenarios\n`);
      return;
    }
    const mark = e.report.status === "passed" ? "✓" : e.report.status === "failed" ? "✗" : "–";
    if (tty) {
      stream.write(`\r\u001b[2K[${e.done}/${e.total}] ${mark} ${e.report.id}`);
      if (e.done === e.total) stream.write("\r\u001b[2K");
    } else if (e.report.status === "failed") stream.write(`  ✗ ${e.report.id}\n`);
  };
}

async function main(argv: string[]): Promise<number> {
  let args: CliArgs;
  try {
    args = parseCliArgs(argv);
  } catch (err) {
    process.stderr.write(`car-conformance: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const suite = loadCapabilities(args.scenariosDir);
  if (args.list) {
    for (const c of suite) process.stdout.write(`${c.capability} (${c.required ? "required" : "optional"}): ${c.scenarios.length} scenarios — ${c.title}\n`);
    return 0;
  }

  const known = knownFeatures(suite);
  const unknownFeatures = args.features.filter((f) => !known.includes(f));
  if (unknownFeatures.length > 0) {
    process.stderr.write(`car-conformance: unknown feature: ${unknownFeatures.join(", ")} (known: ${known.join(", ")})\n`);
    return 2;
  }

  let server: SpawnedServer | undefined;
  let factory: RuntimeFactory;
  let carHome: string | undefined;
  if (args.engine) factory = { ...engineAdapter(), ...(args.features.length > 0 ? { features: args.features } : {}) };
  else {
    let url = args.ws;
    let token = args.token ?? nonEmpty(process.env["CAR_AUTH_TOKEN"]);
    if (args.cmd !== undefined) {
      // A server we start gets an empty home of its own: a durable store starts empty, and no operator rules apply.
      carHome = mkdtempSync(join(tmpdir(), "runtimebench-home-"));
      try {
        server = await spawnServer({
          command: args.cmd,
          ...(url === undefined ? {} : { url }),
          timeoutMs: args.startTimeoutMs,
          env: { ...process.env, CAR_HOME: carHome },
        });
      } catch (err) {
        rmSync(carHome, { recursive: true, force: true });
        process.stderr.write(`car-conformance: could not start the server: ${err instanceof Error ? err.message : String(err)}\n`);
        return 2;
      }
      url = server.url;
      token ??= server.token;
    }
    factory = wsAdapter({ url: url!, features: args.features, ...(token === undefined ? {} : { token }) });
    // One session up front: an unreachable server or a refused token is bad usage (exit 2), not 160 failed scenarios.
    try {
      await factory.destroyRuntime?.(await factory.createRuntime());
    } catch (err) {
      process.stderr.write(`car-conformance: cannot open a session on ${url}: ${err instanceof Error ? err.message : String(err)}\n`);
      await server?.stop();
      if (carHome !== undefined) rmSync(carHome, { recursive: true, force: true });
      return 2;
    }
  }

  const stop = async (): Promise<void> => {
    await server?.stop();
    if (carHome !== undefined) rmSync(carHome, { recursive: true, force: true });
  };
  const onSignal = (): void => void stop().then(() => process.exit(130));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const report = await runConformance({
      ...factory,
      suite,
      capabilities: args.capabilities,
      scenarioFilter: args.scenarios,
      onProgress: progressPrinter(process.stderr),
      ...(args.timeoutMs === undefined ? {} : { scenarioTimeoutMs: args.timeoutMs }),
    });
    const human = formatHuman(report, process.stderr.isTTY === true && process.env["NO_COLOR"] === undefined);
    if (args.json === "-") {
      process.stderr.write(human);
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      process.stdout.write(human);
      if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
    }
    if (args.junit !== undefined) writeFileSync(args.junit, formatJunit(report));
    return report.verdict === "conformant" || (report.verdict === "partial" && report.failed === 0 && report.errors === 0) ? 0 : 1;
  } catch (err) {
    process.stderr.write(`car-conformance: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await stop();
  }
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`car-conformance: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 2;
  },
);
