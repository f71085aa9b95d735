/**
 * `permission.approve` / `permission.reject` keep the reviewer's `evidence`
 * with the decision in the shared ledger (a real SQLite file, over a real
 * WebSocket), and refuse evidence too large to keep.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { openCarDatabase } from "./car-database.ts";
import { startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

it("stores evidence with the decision, durably, and refuses an oversized one", async () => {
  const carHome = await mkdtemp(join(tmpdir(), "car-serve-evidence-"));
  const store = await openCarDatabase(join(carHome, "car.db"), { env: { CAR_HOME: carHome } });
  const server = await startServer({ port: 0, carHome, store });
  const c = await TestClient.open(server.url, server.token);
  try {
    const evidence = { ticket: "OPS-12", diff_sha: "abc123", checks: ["ci green"] };
    const record = await c.result("permission.approve", { fingerprint: "e".repeat(64), required_tier: "full_access", reason: "reviewed", evidence });
    expect(record).toMatchObject({ decision: "approved", evidence });
    const stored = (await store.approvals.list()).find((r) => r.fingerprint === "e".repeat(64));
    expect(stored?.evidence).toEqual(evidence);
    const big = await c.call("permission.reject", { fingerprint: "f".repeat(64), required_tier: "read_only", evidence: "x".repeat(70_000) });
    expect(big.error?.code).toBe(-32602);
  } finally {
    c.socket.terminate();
    await server.close({ graceMs: 0 });
    await store.close();
    await rm(carHome, { recursive: true, force: true });
  }
});
