/**
 * Soak: a real `car serve` process (heap capped at 256 MiB, as a small
 * deployment would run it) under several clients at once for a bounded
 * time — proposals with large outputs and many references to them, batches,
 * and tool unregister/re-register churn with a fresh schema each round —
 * plus one hostile client referencing a large output hundreds of times.
 * Every legitimate call must be answered without error, the hostile one
 * must be refused, and the server's resident memory must stay under
 * RSS_BOUND_MIB for the whole run (sampled from /proc).
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClient } from "../../../packages/car-server/test/test-client.ts";
import { startCarServe } from "./run-car.ts";

const CLIENTS = 6;
const SOAK_MS = 8_000;
const OUTPUT_BYTES = 512 * 1024;
/** The bound: the process starts at roughly 150 MiB (node + tsx + the CLI); a copy per reference would pass it within seconds. */
const RSS_BOUND_MIB = 400;

let home: string;
let child: ChildProcess;
let url: string;

function rssMib(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kb / 1024;
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "car-serve-soak-"));
  ({ child, url } = await startCarServe(["--max-old-space-size=256"], ["--no-auth", "--db", ":memory:"], { CAR_HOME: home }));
});

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  await rm(home, { recursive: true, force: true });
});

/** One legitimate client's loop until the deadline; returns how many calls it made. */
async function worker(n: number, deadline: number, failures: string[]): Promise<number> {
  const c = await TestClient.open(url, undefined);
  const blob = "z".repeat(OUTPUT_BYTES);
  c.handle("tools.execute", (p) => ({ result: p.tool.startsWith("gen") ? { blob, n } : Array.isArray(p.params.v) ? p.params.v.length : 0 }));
  const expectOk = (what: string, reply: { error?: { message: string } }) => {
    if (reply.error !== undefined) failures.push(`client ${n} ${what}: ${reply.error.message}`);
  };
  let calls = 0;
  for (let round = 0; Date.now() < deadline; round++) {
    const gen = `gen_${n}_${round}`;
    // A fresh schema every round (churn through the compiled-schema cache).
    const schema = { type: "object", properties: { tag: { type: "string", pattern: `^r${round}-[a-z]+$` }, mode: { enum: [{ round }, "x"] } } };
    expectOk("tools.register", await c.call("tools.register", [{ name: gen, parameters: schema }, { name: "sink" }]));
    const refs = Array(5).fill("$a.output");
    const reply = await c.call("proposal.submit", {
      proposal: {
        actions: [
          { id: "a", type: "tool_call", tool: gen, parameters: { tag: `r${round}-ok`, mode: { round } } },
          ...["b", "c", "d"].map((id) => ({ id, type: "tool_call", tool: "sink", parameters: { v: refs }, dependencies: ["a"] })),
          { id: "w", type: "state_write", parameters: { key: `soak:${n}`, value: round }, dependencies: ["d"] },
        ],
      },
    });
    expectOk("proposal.submit", reply);
    const statuses = (reply.result as { results: { status: string }[] } | undefined)?.results.map((r) => r.status) ?? [];
    if (statuses.some((s) => s !== "succeeded")) failures.push(`client ${n} round ${round}: ${statuses.join(",")}`);
    c.sendRaw(
      JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ jsonrpc: "2.0", id: `b${round}-${i}`, method: "state.get", params: { key: `soak:${n}` } }))),
    );
    const batch: { error?: unknown }[] = await c.waitFor((f) => Array.isArray(f) && f[0]?.id === `b${round}-0`);
    if (batch.length !== 200 || batch.some((r) => r.error !== undefined)) failures.push(`client ${n} batch ${round}`);
    expectOk("tools.unregister", await c.call("tools.unregister", { name: gen }));
    c.frames.length = 0;
    calls += 204;
  }
  await c.close();
  return calls;
}

/** References a 1 MiB output 400 times: refused, and nothing else is disturbed. */
async function hostile(): Promise<string[]> {
  const c = await TestClient.open(url, undefined);
  c.handle("tools.execute", (p) => ({ result: p.tool === "big" ? "q".repeat(1024 * 1024) : 0 }));
  await c.result("tools.register", [{ name: "big" }, { name: "sink" }]);
  const r = await c.result("proposal.submit", {
    proposal: {
      actions: [
        { id: "a", type: "tool_call", tool: "big" },
        { id: "b", type: "tool_call", tool: "sink", parameters: { v: Array(400).fill("$a.output") }, dependencies: ["a"] },
      ],
    },
  });
  await c.close();
  return r.results.map((x: { status: string; error: string | null }) => `${x.status}:${x.error ?? ""}`);
}

describe("car serve soak", () => {
  it(`${CLIENTS} clients for ${SOAK_MS / 1000} s: every legitimate call answered, RSS under ${RSS_BOUND_MIB} MiB`, async () => {
    const pid = child.pid!;
    let peak = rssMib(pid);
    const sampler = setInterval(() => {
      if (child.exitCode === null) peak = Math.max(peak, rssMib(pid));
    }, 100);
    const failures: string[] = [];
    const deadline = Date.now() + SOAK_MS;
    try {
      const [calls, attack] = await Promise.all([Promise.all(Array.from({ length: CLIENTS }, (_, n) => worker(n, deadline, failures))), hostile()]);
      console.log(`soak: ${calls.reduce((a, b) => a + b, 0)} calls answered; server RSS peak ${peak.toFixed(0)} MiB`);
      expect(failures).toEqual([]);
      expect(calls.every((n) => n > 0)).toBe(true);
      expect(attack[0]).toMatch(/^succeeded/);
      expect(attack[1]).toMatch(/^rejected:.*over the \d+-byte limit/);
    } finally {
      clearInterval(sampler);
    }
    expect(child.exitCode).toBeNull();
    // A fresh client is still served after the soak.
    const after = await TestClient.open(url, undefined);
    expect(await after.result("state.set", { key: "k", value: 1 })).toBe("ok");
    expect(await after.result("state.get", { key: "k" })).toBe(1);
    await after.close();
    expect(peak).toBeLessThan(RSS_BOUND_MIB);
  }, 90_000);
});
