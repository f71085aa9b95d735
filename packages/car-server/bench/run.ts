/**
 * Server throughput: `car serve` in memory (`--db :memory:`) and with its
 * default durable SQLite store, beside a FLOOR — a minimal JSON-RPC-over-`ws`
 * server in its own Node process doing the same message dance with no runtime
 * work (`floor-server.mjs`) — all measured in this run, one server process at
 * a time, the load generated from this process.
 *
 * Each connection submits one-action proposals back to back: submit → the
 * server's `tools.execute` → the client's answer → the result. Phases, per
 * server: C = 1, 10, 50 connections; 10-action fan-outs at C = 50 (ten
 * `tools.execute` round trips per proposal); and, for `car serve`, one
 * long-lived connection whose server CPU per proposal is compared after
 * 100k events with its first 1,000 proposals. Reported: proposals/s,
 * actions/s, p50/p99 latency, server CPU per proposal (from
 * /proc/<pid>/stat, so Linux only), with the goals as ratios in the same run:
 *  - in memory at C = 50: ≥ 5,000 proposals/s and ≥ ⅓ of the floor;
 *  - durable at C = 50: ≥ ½ of in memory;
 *  - long-lived: per-proposal CPU after 100k events within 1.2× of the first 1k proposals.
 *
 * Run: `pnpm bench` in packages/car-server (builds, then runs). Options:
 *   --seconds N    length of each timed phase (default 4)
 *   --long N       proposals on the long-lived connection (default 21000; 0 skips)
 *   --long-on a,b  servers that get the long-lived run (default memory: the
 *                  history a connection accumulates is the session's, whatever the store)
 *   --only a,b     servers to run (floor, memory, durable)
 *   --profile DIR  run the servers under --cpu-prof, profiles into DIR, top self-time printed
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : (args[i + 1] ?? fallback);
};
const SECONDS = Number(option("--seconds", "4"));
const LONG = Number(option("--long", "21000"));
const ONLY = option("--only", "floor,memory,durable").split(",");
const LONG_ON = option("--long-on", "memory").split(",");
const PROFILE = option("--profile", "");
const CLOCK_TICKS = 100;

interface Target {
  name: "floor" | "memory" | "durable";
  command: string[];
}

const targets: Target[] = [
  { name: "floor" as const, command: [join(here, "floor-server.mjs")] },
  { name: "memory" as const, command: [join(here, "serve.mjs"), "--port", "0", "--no-auth", "--db", ":memory:"] },
  { name: "durable" as const, command: [join(here, "serve.mjs"), "--port", "0", "--no-auth"] },
].filter((t) => ONLY.includes(t.name));

interface Started {
  child: ChildProcess;
  url: string;
  home: string;
}

async function start(target: Target): Promise<Started> {
  const home = mkdtempSync(join(tmpdir(), `car-server-bench-${target.name}-`));
  const profile = PROFILE ? [`--cpu-prof`, `--cpu-prof-dir=${join(PROFILE, target.name)}`] : [];
  const child = spawn(process.execPath, [...profile, ...target.command], {
    env: { ...process.env, CAR_HOME: home },
    // The server logs one line per method to stderr, as it would to an operator's terminal or file.
    stdio: ["ignore", "pipe", openSync("/dev/null", "w")],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (ws:\/\/\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`${target.name} exited with ${code} before listening: ${out}`)));
  });
  return { child, url, home };
}

async function stop(s: Started): Promise<void> {
  const exited = new Promise((resolve) => s.child.once("exit", resolve));
  s.child.kill("SIGTERM");
  await exited;
  rmSync(s.home, { recursive: true, force: true });
}

/** User + system CPU of a process so far, in µs. */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

/** One client connection that answers every `tools.execute` at once and submits proposals back to back. */
class Client {
  #seq = 0;
  #waiting = new Map<number, (frame: { result?: unknown; error?: unknown }) => void>();
  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString());
      if (frame.method === "tools.execute") {
        socket.send(`{"jsonrpc":"2.0","id":${JSON.stringify(frame.id)},"result":{"ok":true}}`);
        return;
      }
      const resolve = this.#waiting.get(frame.id);
      if (resolve !== undefined) {
        this.#waiting.delete(frame.id);
        resolve(frame);
      }
    });
  }

  static open(url: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once("open", () => resolve(new Client(socket)));
      socket.once("error", reject);
    });
  }

  call(method: string, params: unknown): Promise<{ result?: unknown; error?: unknown }> {
    const id = ++this.#seq;
    const reply = new Promise<{ result?: unknown; error?: unknown }>((resolve) => this.#waiting.set(id, resolve));
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return reply;
  }

  close(): void {
    this.socket.close();
  }
}

function proposalOf(actions: number, n: number): unknown {
  return {
    proposal: {
      actions: Array.from({ length: actions }, (_, i) => ({ id: `a${i}`, type: "tool_call", tool: "echo", parameters: { n, i } })),
    },
  };
}

interface PhaseResult {
  proposals: number;
  actions: number;
  seconds: number;
  p50: number;
  p99: number;
  cpuPerProposal: number;
}

async function connect(url: string, count: number): Promise<Client[]> {
  const clients = await Promise.all(Array.from({ length: count }, () => Client.open(url)));
  await Promise.all(clients.map((c) => c.call("tools.register", [{ name: "echo" }])));
  return clients;
}

/** `clients` submit `actions`-action proposals back to back for `SECONDS` after a short warm-up. */
async function phase(pid: number, clients: Client[], actions: number): Promise<PhaseResult> {
  let measuring = false;
  let stop = false;
  const latencies: number[] = [];
  let proposals = 0;
  let n = 0;
  const loop = async (c: Client) => {
    while (!stop) {
      const t = performance.now();
      const reply = await c.call("proposal.submit", proposalOf(actions, n++));
      if (reply.error !== undefined) throw new Error(`proposal.submit failed: ${JSON.stringify(reply.error)}`);
      if (measuring) {
        latencies.push(performance.now() - t);
        proposals++;
      }
    }
  };
  const running = clients.map(loop);
  await sleep(Math.min(1000, SECONDS * 250));
  measuring = true;
  const cpu0 = cpuMicros(pid);
  const t0 = performance.now();
  await sleep(SECONDS * 1000);
  measuring = false;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuMicros(pid) - cpu0;
  stop = true;
  await Promise.all(running);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  return { proposals, actions: proposals * actions, seconds, p50: at(0.5), p99: at(0.99), cpuPerProposal: cpu / proposals };
}

/** One connection, `LONG` proposals in a row: server CPU per proposal over the first 1,000 and the last 1,000. */
async function longLived(pid: number, url: string): Promise<{ first: number; last: number; eventsBefore: number }> {
  const [client] = (await connect(url, 1)) as [Client];
  const window = 1000;
  let first = 0;
  let last = 0;
  let cpu = cpuMicros(pid);
  for (let i = 0; i < LONG; i++) {
    if (i === LONG - window) cpu = cpuMicros(pid);
    const reply = await client.call("proposal.submit", proposalOf(1, i));
    if (reply.error !== undefined) throw new Error(`proposal.submit failed: ${JSON.stringify(reply.error)}`);
    if (i === window - 1) first = (cpuMicros(pid) - cpu) / window;
  }
  last = (cpuMicros(pid) - cpu) / window;
  client.close();
  // Five audit events per one-action proposal.
  return { first, last, eventsBefore: (LONG - window) * 5 };
}

const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

const results = new Map<string, PhaseResult>();
const rows: string[] = [];
const row = (server: string, label: string, r: PhaseResult) => {
  results.set(`${server} ${label}`, r);
  const line =
    r.proposals === 0
      ? `| ${server} | ${label} | 0 (none finished in ${fmt(r.seconds, 1)} s; run longer phases) | — | — | — |`
      : `| ${server} | ${label} | ${fmt(r.proposals / r.seconds)} | ${fmt(r.actions / r.seconds)} | ${fmt(r.p50, 1)} / ${fmt(r.p99, 1)} | ${fmt(r.cpuPerProposal)} |`;
  rows.push(line);
  console.error(line);
};
const longRows: string[] = [];

const loadBefore = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const clientCpu0 = process.cpuUsage();
for (const target of targets) {
  const server = await start(target);
  const pid = server.child.pid as number;
  try {
    for (const c of [1, 10, 50]) {
      const clients = await connect(server.url, c);
      row(target.name, `C=${c}, 1 action`, await phase(pid, clients, 1));
      for (const client of clients) client.close();
    }
    const clients = await connect(server.url, 50);
    row(target.name, "C=50, 10-action fan-out", await phase(pid, clients, 10));
    for (const client of clients) client.close();
    if (LONG_ON.includes(target.name) && LONG > 1000) {
      const long = await longLived(pid, server.url);
      longRows.push(
        `| ${target.name} | ${fmt(long.first)} | ${fmt(long.last)} (after ${fmt(long.eventsBefore)} events) | ${fmt(long.last / long.first, 2)}× (goal ≤ 1.2×: ${verdict(long.last / long.first <= 1.2)}) |`,
      );
      console.error(longRows.at(-1));
    }
  } finally {
    await stop(server);
  }
}
const clientCpu = process.cpuUsage(clientCpu0);
const loadAfter = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

console.log(`car serve throughput, ${SECONDS} s per phase, Node ${process.version}; load average ${loadBefore} before, ${loadAfter} after`);
console.log(`(the load generator used ${fmt((clientCpu.user + clientCpu.system) / 1e6, 1)} s of CPU in this process)\n`);
console.log("| server | phase | proposals/s | actions/s | p50 / p99 ms | server CPU µs/proposal |");
console.log("|---|---|---|---|---|---|");
for (const r of rows) console.log(r);
if (longRows.length > 0) {
  console.log("\n| server | CPU µs/proposal, first 1,000 | CPU µs/proposal, last 1,000 | ratio |");
  console.log("|---|---|---|---|");
  for (const r of longRows) console.log(r);
}

const rate = (key: string) => {
  const r = results.get(key);
  return r === undefined ? Number.NaN : r.proposals / r.seconds;
};
const memory = rate("memory C=50, 1 action");
const floor = rate("floor C=50, 1 action");
const durable = rate("durable C=50, 1 action");
console.log("");
if (!Number.isNaN(memory)) console.log(`goal: in memory at C=50 ≥ 5,000 proposals/s: ${fmt(memory)} — ${verdict(memory >= 5000)}`);
if (!Number.isNaN(memory) && !Number.isNaN(floor))
  console.log(`goal: in memory at C=50 ≥ ⅓ of the floor: ${fmt(memory / floor, 3)}× the floor (${fmt(floor)}/s) — ${verdict(memory / floor >= 1 / 3)}`);
if (!Number.isNaN(memory) && !Number.isNaN(durable))
  console.log(`goal: durable at C=50 ≥ ½ of in memory: ${fmt(durable / memory, 3)}× — ${verdict(durable / memory >= 0.5)}`);

if (PROFILE) {
  for (const target of targets) {
    const dir = join(PROFILE, target.name);
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (file === undefined) continue;
    console.log(`\ntop self time, ${target.name}:`);
    for (const line of topSelfTime(join(dir, file), 15)) console.log(`  ${line}`);
  }
}

/** The functions with the most self time in a `.cpuprofile`, as "share  name  file:line". */
function topSelfTime(path: string, count: number): string[] {
  const profile = JSON.parse(readFileSync(path, "utf8")) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    if (frame === undefined || frame.functionName === "(idle)") return;
    const key = `${frame.functionName || "(anonymous)"}  ${frame.url.split("/").slice(-2).join("/")}:${frame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
}
