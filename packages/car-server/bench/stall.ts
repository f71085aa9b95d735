/**
 * The 34-reference stall (issue "one door" §4): one client submits a
 * proposal whose first action returns a ~1 MiB output and whose next N
 * actions each take that output as a parameter (`$a.output`); a bystander
 * connection, in a process of its own, calls `state.get` every 20 ms. The
 * bench prints the bystander's slowest answer, the proposal's wall time and
 * the server's CPU for it (from /proc) and the longest its event loop was
 * held (measured inside it, so a loaded machine delaying the bystander's own
 * process does not count). `car serve` runs from source in its
 * own process (`--db :memory:`); `--cpu-prof DIR` profiles it.
 *
 *   node --import tsx --conditions=source bench/stall.ts [--refs 34] [--kib 960] [--shape rows|string] [--cpu-prof DIR]
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { CarClient } from "@car/client";

const { values } = parseArgs({
  options: {
    refs: { type: "string", default: "34" },
    kib: { type: "string", default: "960" },
    shape: { type: "string", default: "rows" },
    "cpu-prof": { type: "string" },
  },
});
const refs = Number(values.refs);
/** The output: one string, or (`rows`, the costlier shape to walk) rows of small fields, ~`kib` KiB of JSON either way. */
const big =
  values.shape === "string"
    ? "x".repeat(Number(values.kib) * 1024)
    : Array.from({ length: Math.floor((Number(values.kib) * 1024) / 56) }, (_, i) => ({ id: i, name: `row ${i}`, ok: true, tag: "abcdef" }));

const require = createRequire(import.meta.url);
const tsx = pathToFileURL(require.resolve("tsx")).href;
const prof = values["cpu-prof"] === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", values["cpu-prof"]];
const server = spawn(
  process.execPath,
  [
    ...prof,
    "--require",
    fileURLToPath(new URL("loop-delay.cjs", import.meta.url)),
    "--import",
    tsx,
    "--conditions=source",
    fileURLToPath(new URL("serve-source.mjs", import.meta.url)),
    "--port",
    "0",
    "--no-auth",
    "--db",
    ":memory:",
  ],
  { stdio: ["ignore", "pipe", "pipe"] },
);
let serverErr = "";
server.stderr!.setEncoding("utf8").on("data", (d: string) => (serverErr += d));
/** The server's longest event-loop delay since the last call (see loop-delay.cjs). */
async function loopDelayMax(): Promise<number> {
  const from = serverErr.length;
  server.kill("SIGUSR2");
  for (;;) {
    const m = /loop-delay-max-ms (\d+)/.exec(serverErr.slice(from));
    if (m) return Number(m[1]);
    await new Promise((r) => setTimeout(r, 10));
  }
}
const url = await new Promise<string>((resolve, reject) => {
  let out = "";
  server.stdout!.setEncoding("utf8").on("data", (d: string) => {
    out += d;
    const m = /listening on (ws:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]!);
  });
  server.once("exit", (code) => reject(new Error(`car serve exited with ${code}`)));
});

/** Server CPU so far, in ms (utime + stime, 10 ms ticks). */
const cpuMs = () => {
  const fields = readFileSync(`/proc/${server.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

const BYSTANDER = `
import { createRequire } from "node:module";
const WebSocket = createRequire(process.env.WS_FROM)("ws");
const ws = new WebSocket(process.env.URL);
let id = 0, slowest = 0, running = true, started = 0;
const ask = () => { started = performance.now(); ws.send(JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "state.get", params: { key: "k" } })); };
process.on("message", () => { running = false; });
ws.on("open", () => { process.send("ready"); ask(); });
ws.on("message", () => {
  slowest = Math.max(slowest, performance.now() - started);
  if (!running) { process.send(slowest, () => process.exit(0)); return; }
  setTimeout(ask, 20);
});
`;
const watcher = spawn(process.execPath, ["--input-type=module", "-e", BYSTANDER], {
  env: { ...process.env, URL: url, WS_FROM: fileURLToPath(new URL("../package.json", import.meta.url)) },
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
await new Promise((r) => watcher.once("message", r));

const client = await CarClient.open(url, { unhandledRequests: "ignore" });
client.onRequest("tools.execute", ((p: { tool: string }) => (p.tool === "big" ? big : "ok")) as never);
await client.request("tools.register", [{ name: "big" }, { name: "take" }]);
const actions = [
  { id: "a", type: "tool_call", tool: "big" },
  ...Array.from({ length: refs }, (_, i) => ({ id: `r${i}`, type: "tool_call", tool: "take", parameters: { input: "$a.output" }, dependencies: ["a"] })),
];
await new Promise((r) => setTimeout(r, 500));
await loopDelayMax();
const cpu0 = cpuMs();
const t0 = performance.now();
const result = (await client.request("proposal.submit", { proposal: { id: "stall", actions } })) as unknown as { results: { status: string }[] };
const wall = performance.now() - t0;
const cpu = cpuMs() - cpu0;
const blocked = await loopDelayMax();
const slowest = await new Promise<number>((resolve) => {
  watcher.once("message", (m) => resolve(Number(m)));
  watcher.send("stop");
});
const ok = result.results.filter((r) => r.status === "succeeded").length;
if (ok < refs + 1) console.log(JSON.stringify(result.results.find((r) => r.status !== "succeeded")));
console.log(
  `${refs} references to a ${values.kib} KiB output (${values.shape}): ${ok}/${refs + 1} succeeded; proposal ${wall.toFixed(0)} ms wall, server CPU ${cpu} ms; server's longest event-loop delay ${blocked} ms; bystander's slowest state.get ${slowest.toFixed(0)} ms`,
);
client.close();
server.kill("SIGINT");
await new Promise((r) => server.once("exit", r));
