/**
 * What the supervision gate costs `proposal.submit` over a real WebSocket:
 * sequential submits of a one-action proposal on one connection, with no
 * supervisor (the gate is one empty-map read), and with a supervisor whose
 * filter does not match (the intent's actions are classified and the
 * filter checked, nothing parked). Alternating rounds, median of each.
 *
 *   node --conditions=source --import tsx packages/car-server/bench/supervision.ts
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../src/server.ts";
import { TestClient } from "../test/test-client.ts";

const SUBMITS = Number(process.env["SUBMITS"] ?? 1500);
const ROUNDS = Number(process.env["ROUNDS"] ?? 5);

const carHome = await mkdtemp(join(tmpdir(), "car-bench-supervision-"));
const server = await startServer({ port: 0, carHome, writeTokenFile: false });
try {
  const client = await TestClient.open(server.url, server.token);
  const supervisor = await TestClient.open(server.url, server.token);
  const proposal = (i: number) => ({ proposal: { id: `b${i}`, actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: i } }] } });
  const round = async (): Promise<number> => {
    const start = performance.now();
    for (let i = 0; i < SUBMITS; i++) await client.result("proposal.submit", proposal(i));
    return (SUBMITS / (performance.now() - start)) * 1000;
  };
  await round(); // warm-up
  const none: number[] = [];
  const unmatched: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    await supervisor.result("supervision.unsubscribe", {});
    none.push(await round());
    await supervisor.result("supervision.subscribe", { filter: { tools: ["nothing_calls_this"] } });
    unmatched.push(await round());
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `submits/s, median of ${ROUNDS} rounds of ${SUBMITS}: no supervisor ${median(none).toFixed(0)}; a supervisor whose filter does not match ${median(unmatched).toFixed(0)}`,
  );
  console.log(`rounds: none ${none.map((x) => x.toFixed(0)).join(" ")}; unmatched ${unmatched.map((x) => x.toFixed(0)).join(" ")}`);
  await client.close();
  await supervisor.close();
} finally {
  await server.close({ graceMs: 0 });
  await rm(carHome, { recursive: true, force: true });
}
