/**
 * One admission path: the same hostile proposal, sent through each source
 * of actions a connection has — `proposal.submit` and the model behind
 * `planner.run` — meets the same refusal, in the same words, and nothing of
 * it runs.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let server: RunningServer;
const clients: TestClient[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-admission-"));
  server = await startServer({ port: 0, carHome, limits: { maxActionsPerProposal: 5 } });
});
afterAll(async () => {
  for (const c of clients) c.socket.terminate();
  await server.close({ graceMs: 0 });
  await rm(carHome, { recursive: true, force: true });
});

const HOSTILE: Record<string, object> = {
  "a tenant's key": { id: "steal", actions: [{ id: "w", type: "state_write", parameters: { key: "tenant:alice:secret", value: "x" } }] },
  "more actions than the server takes": {
    id: "flood",
    actions: Array.from({ length: 6 }, (_, i) => ({ id: `w${i}`, type: "state_write", parameters: { key: `k${i}`, value: i } })),
  },
};

describe("every source of actions passes the same admission", () => {
  for (const [what, proposal] of Object.entries(HOSTILE)) {
    it(`refuses ${what} alike through proposal.submit and planner.run`, async () => {
      const c = await TestClient.open(server.url, server.token);
      clients.push(c);
      c.handle("planner.propose", () => ({ result: proposal }));
      const submitted = await c.call("proposal.submit", { proposal });
      expect(submitted.error).toBeDefined();
      const planned = await c.result("planner.run", { task: "t", max_attempts: 1 });
      expect(planned.outcome).toBe("exhausted");
      expect(planned.attempts[0].verdict).toBe("invalid_proposal");
      expect(planned.attempts[0].feedback.message ?? JSON.stringify(planned.attempts[0].feedback)).toContain(submitted.error!.message);
      // Nothing of either ran.
      expect(await c.result("state.keys")).toEqual([]);
    });
  }
});
