/**
 * A session is an agent, and on a durable store it outlives a restart
 * (DECISIONS §21): the rate-limit slots an agent's calls took are written
 * with its session facts, and read back by the next process, so a restart
 * does not hand the agent a fresh window.
 */
import { manualClock } from "@car/ir";
import { AgentSessions, Runtime } from "@car/engine";
import Database from "better-sqlite3";
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

it("session facts deferred to a commit are written by that commit, not on their own, and survive a restart", async () => {
  const clock = manualClock(Date.parse("2026-06-01T00:00:00Z"));
  const store = sqlite(temp.db, { clock });
  const agents = new AgentSessions(clock, store.events);
  // Another process's view of the file: what is written is what a crash would leave.
  const reader = new Database(temp.db, { readonly: true });
  const stored = () => (reader.prepare("SELECT count(*) AS n FROM events WHERE kind = 'session_trace'").get() as { n: number }).n;
  const seen: number[] = [];
  const rt = new Runtime({
    store,
    clock,
    agent: agents.get("bot"),
    admission: () => ({
      committing() {
        agents.persist("bot", true);
        seen.push(stored());
      },
      release() {},
    }),
  });
  rt.registerTool({ name: "notify", rate_limit: LIMIT }, () => "sent");
  try {
    const result = await rt.executeProposal({ actions: [{ id: "a", type: "tool_call", tool: "notify", parameters: { n: 1 } }] });
    expect(result.results[0]?.status).toBe("succeeded");
    // Deferred: nothing of it on disk when the commit is about to start (a write of its own would be there already)…
    expect(seen).toEqual([0]);
    // …and the commit wrote it, in the chain after the proposal's events.
    expect(stored()).toBe(1);
    const kinds = (reader.prepare("SELECT kind FROM events ORDER BY seq").all() as { kind: string }[]).map((r) => r.kind);
    expect(kinds.indexOf("session_trace")).toBeGreaterThan(kinds.indexOf("action_succeeded"));
    expect(store.verifyChain()).toMatchObject({ ok: true });
  } finally {
    reader.close();
    await rt.close();
    await store.close();
  }
  const second = sqlite(temp.db, { clock });
  try {
    const wait = new AgentSessions(clock, second.events).get("bot").limiter.acquire("notify", { max_calls: 1, interval_secs: 60 }, clock.now());
    expect(wait).toBe(60_000);
  } finally {
    await second.close();
  }
});

it("session facts persisted with no commit coming are written by the log's group write, and outlive the process", async () => {
  const clock = manualClock(Date.parse("2026-06-01T00:00:00Z"));
  const store = sqlite(temp.db, { clock });
  const agents = new AgentSessions(clock, store.events);
  const reader = new Database(temp.db, { readonly: true });
  const stored = () => (reader.prepare("SELECT count(*) AS n FROM events WHERE kind = 'session_trace'").get() as { n: number }).n;
  try {
    agents.get("bot").limiter.acquire("notify", LIMIT, clock.now());
    agents.persist("bot");
    // No proposal will commit: the group write puts it on disk by itself, without waiting for one.
    await store.events.persist?.();
    expect(stored()).toBe(1);
    // Nothing left to write: a second call writes nothing.
    agents.persist("bot");
    await store.events.persist?.();
    expect(stored()).toBe(1);
  } finally {
    reader.close();
    await store.close();
  }
  const second = sqlite(temp.db, { clock });
  try {
    expect(new AgentSessions(clock, second.events).get("bot").limiter.acquire("notify", { max_calls: 1, interval_secs: 60 }, clock.now())).toBe(60_000);
  } finally {
    await second.close();
  }
});
