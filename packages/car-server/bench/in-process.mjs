/**
 * CPU per proposal with `car serve` and its load in ONE process, for A/B
 * comparisons on a loaded machine: `runServe` (in memory, the human log
 * written to /dev/null as `car serve` writes stderr) and 50 `ws` clients
 * submitting one-action proposals back to back, answering every
 * `tools.execute` at once. The process's own user + system CPU is divided
 * by the proposals: no other process's work is counted, so two builds
 * measured alternately compare far better than two `run.ts` servers do
 * while the machine's load moves. The client's share is the same for both.
 *
 * Run: `node bench/in-process.mjs [DIST] [PROPOSALS] [ROUNDS]` — DIST is a
 * built `dist/` directory of this package (default ../dist; another
 * worktree's to compare), each round PROPOSALS proposals (default 3000)
 * after a 2,000-proposal warm-up, ROUNDS rounds (default 3).
 */
import { mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(process.argv[2] || join(here, "..", "dist"));
const proposalsPerRound = Number(process.argv[3] ?? 3000);
const rounds = Number(process.argv[4] ?? 3);
const CONNECTIONS = 50;

// The `ws` and the build of the package under test, so another worktree's build brings its own.
const WebSocket = createRequire(join(dist, "..", "package.json"))("ws");
const { runServe } = await import(join(dist, "index.mjs"));

const devNull = openSync("/dev/null", "w");
const home = mkdtempSync(join(tmpdir(), "car-server-in-process-"));
let stop;
let served;
const url = await new Promise((ready) => {
  const io = {
    stdout: (line) => {
      const m = /listening on (ws:\/\/\S+)/.exec(line);
      if (m) ready(m[1]);
    },
    stderr: (line) => writeSync(devNull, `${line}\n`),
    env: { ...process.env, CAR_HOME: home },
    onSignal: (handler) => {
      stop = handler;
      return () => {};
    },
  };
  served = runServe(["--port", "0", "--no-auth", "--db", ":memory:"], io);
});

class Client {
  #seq = 0;
  #waiting = new Map();
  constructor(socket) {
    this.socket = socket;
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString());
      if (frame.method === "tools.execute") {
        socket.send(`{"jsonrpc":"2.0","id":${JSON.stringify(frame.id)},"result":{"ok":true}}`);
        return;
      }
      const resolveReply = this.#waiting.get(frame.id);
      this.#waiting.delete(frame.id);
      resolveReply?.(frame);
    });
  }
  call(method, params) {
    const id = ++this.#seq;
    const reply = new Promise((r) => this.#waiting.set(id, r));
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return reply;
  }
}

const clients = await Promise.all(
  Array.from(
    { length: CONNECTIONS },
    () =>
      new Promise((open) => {
        const socket = new WebSocket(url);
        socket.once("open", () => open(new Client(socket)));
      }),
  ),
);
await Promise.all(clients.map((c) => c.call("tools.register", [{ name: "echo" }])));

let n = 0;
async function submit(total) {
  let left = total;
  await Promise.all(
    clients.map(async (c) => {
      while (left > 0) {
        left--;
        const reply = await c.call("proposal.submit", { proposal: { actions: [{ id: "a0", type: "tool_call", tool: "echo", parameters: { n: n++ } }] } });
        if (reply.error !== undefined) throw new Error(`proposal.submit failed: ${JSON.stringify(reply.error)}`);
      }
    }),
  );
}

await submit(2000);
const perProposal = [];
for (let round = 0; round < rounds; round++) {
  const before = process.cpuUsage();
  await submit(proposalsPerRound);
  const used = process.cpuUsage(before);
  perProposal.push(Math.round((used.user + used.system) / proposalsPerRound));
}
console.log(`${dist}: CPU µs per proposal, server and clients in one process: ${perProposal.join(" ")}`);
for (const c of clients) c.socket.close();
stop("SIGTERM");
await served;
rmSync(home, { recursive: true, force: true });
process.exit(0);
