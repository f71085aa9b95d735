/**
 * What one `proposal.submit` costs must not grow with the connection's
 * history (issue #41): the answer — a refused commit included — comes from
 * the run's report, not from reading the session's event log again. Counted
 * in events scanned (every read of an in-memory log walks all of it), not
 * in time, so a loaded machine cannot make it pass or fail.
 */
import { InMemoryEventLog } from "@car/engine";
import { afterEach, describe, expect, it, vi } from "vitest";
import { useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-submit-cost-");

afterEach(() => {
  vi.restoreAllMocks();
});

describe("proposal.submit's cost", () => {
  it("scans no more of the log on the 41st submit of a connection than on its first", async () => {
    const c = await fx.client();
    await c.result("session.init", { client_id: "cost", tools: [{ name: "echo" }] });
    c.handle("tools.execute", (p: { params: unknown }) => ({ result: p.params }));
    // Every event an in-memory log read walks through: the whole log, whatever the filter.
    let scanned = 0;
    const query = InMemoryEventLog.prototype.query;
    vi.spyOn(InMemoryEventLog.prototype, "query").mockImplementation(function (this: InMemoryEventLog, q) {
      scanned += this.count();
      return query.call(this, q);
    });
    const submit = async (n: number): Promise<number> => {
      const before = scanned;
      const result = await c.result("proposal.submit", {
        proposal: {
          id: `p${n}`,
          actions: [
            { id: "e", type: "tool_call", tool: "echo", parameters: { n } },
            { id: "w", type: "state_write", parameters: { key: "k", value: n }, dependencies: ["e"] },
          ],
        },
      });
      expect(result.results.map((r: { status: string }) => r.status)).toEqual(["succeeded", "succeeded"]);
      return scanned - before;
    };
    const first = await submit(1);
    for (let n = 2; n <= 40; n++) await submit(n);
    const last = await submit(41);
    expect(last).toBe(first);
    // The history is there to be scanned: forty proposals' events.
    const history = await c.result("events.query", {});
    expect((history.events ?? history).length).toBeGreaterThan(40 * 5);
  });
});
