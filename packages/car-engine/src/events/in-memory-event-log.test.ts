import { describe, expect, it } from "vitest";
import { InMemoryEventLog } from "./in-memory-event-log.ts";

const at = (s: number): string => new Date(s * 1000).toISOString();

function sample(): InMemoryEventLog {
  const log = new InMemoryEventLog();
  log.append({ kind: "proposal_received", proposal_id: "p1", timestamp: at(1), data: {} });
  log.append({ kind: "action_started", proposal_id: "p1", action_id: "a1", timestamp: at(2), data: { tool: "x" } });
  log.append({ kind: "action_succeeded", proposal_id: "p1", action_id: "a1", timestamp: at(3), data: { tool: "x" } });
  log.append({ kind: "proposal_received", proposal_id: "p2", timestamp: at(4), data: {} });
  return log;
}

describe("InMemoryEventLog", () => {
  it("numbers events and queries by proposal, action, kind, time and data", () => {
    const log = sample();
    expect(log.count()).toBe(4);
    expect(log.query({ proposal_id: "p1" }).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(log.query({ action_id: "a1", kinds: ["action_succeeded"] }).map((e) => e.seq)).toEqual([3]);
    expect(log.query({ since: at(2), until: at(4) }).map((e) => e.seq)).toEqual([2, 3]);
    expect(log.query({ data_matches: { tool: "x" }, order: "desc", limit: 1 }).map((e) => e.seq)).toEqual([3]);
    expect(log.count({ kinds: ["proposal_received"] })).toBe(2);
    expect(log.query({ after_seq: 3 }).map((e) => e.seq)).toEqual([4]);
  });

  it("feeds subscribers the matching events appended after they subscribe, until return()", async () => {
    const log = sample();
    const feed = log.subscribe({ filter: { proposal_id: "p3" } });
    const first = feed.next();
    log.append({ kind: "x", proposal_id: "other", timestamp: at(5), data: {} });
    log.append({ kind: "y", proposal_id: "p3", timestamp: at(6), data: {} });
    log.append({ kind: "z", proposal_id: "p3", timestamp: at(7), data: {} });
    expect((await first).value).toMatchObject({ kind: "y", seq: 6 });
    expect((await feed.next()).value).toMatchObject({ kind: "z" });
    const pending = feed.next();
    await feed.return!();
    expect(await pending).toEqual({ value: undefined, done: true });
    log.append({ kind: "z", proposal_id: "p3", timestamp: at(8), data: {} });
    expect(await feed.next()).toEqual({ value: undefined, done: true });
  });

  it("ends a feed when its signal aborts", async () => {
    const log = new InMemoryEventLog();
    const ac = new AbortController();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const e of log.subscribe({ signal: ac.signal })) seen.push(e.kind);
    })();
    log.append({ kind: "a", proposal_id: null, timestamp: at(1), data: {} });
    await new Promise((r) => setImmediate(r));
    ac.abort();
    await reading;
    expect(seen).toEqual(["a"]);
  });
});
