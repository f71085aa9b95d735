/**
 * A session is an agent, and on a durable store it outlives a restart
 * (DECISIONS §21): the rate-limit slots an agent's calls took are written
 * with its session facts, and read back by the next process, so a restart
 * does not hand the agent a fresh window.
 */
import { manualClock } from "@car/ir";
import { AgentSessions, Runtime } from "@car/engine";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";
import { afterEach, beforeEach, expect, it } from "vitest";
import { sqlite } from "./sqlite-store.ts";

let temp: TempDir;
beforeEach(() => {
  temp = tempDatabase();
});
afterEach(() => temp.remove());

const LIMIT = { max_calls: 2, interval_secs: 60 };

it("an agent's rate-limit window survives a restart; another agent's is its own", async () => {
  const clock = manualClock(Date.parse("2026-06-01T00:00:00Z"));
  const first = sqlite(temp.db, { clock });
  const agents = new AgentSessions(clock, first.events);
  const rt = new Runtime({ store: first, clock, agent: agents.get("bot") });
  rt.registerTool({ name: "notify", rate_limit: LIMIT }, () => "sent");
  const result = await rt.executeProposal({
    actions: [
      { id: "a", type: "tool_call", tool: "notify", parameters: { n: 1 } },
      { id: "b", type: "tool_call", tool: "notify", parameters: { n: 2 } },
    ],
  });
  expect(result.results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
  agents.persist("bot");
  await rt.close();
  await first.close();

  // The next process: 10 s later, inside the window.
  clock.advance(10_000);
  const second = sqlite(temp.db, { clock });
  try {
    const restarted = new AgentSessions(clock, second.events);
    const wait = restarted.get("bot").limiter.acquire("notify", LIMIT, clock.now());
    expect(wait).toBe(50_000);
    expect(restarted.get("stranger").limiter.acquire("notify", LIMIT, clock.now())).toBe(0);
    // Once the window has passed, the slots are free again.
    clock.advance(50_000);
    expect(restarted.get("bot").limiter.acquire("notify", LIMIT, clock.now())).toBe(0);
    expect(second.verifyChain()).toMatchObject({ ok: true });
  } finally {
    await second.close();
  }
});
