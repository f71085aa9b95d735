/**
 * The server→client half: a call given up with `abandon` rejects with the
 * caller's reason and its late answer is dropped; an answered call cannot be
 * abandoned; a signal still bounds a call as before.
 */
import { CarError } from "@car/ir";
import { describe, expect, it } from "vitest";
import { ClientCallError, RpcPeer } from "./peer.ts";

function peerWithFrames(): { peer: RpcPeer; frames: object[] } {
  const frames: object[] = [];
  return { peer: new RpcPeer((frame) => frames.push(frame)), frames };
}

describe("RpcPeer", () => {
  it("abandon rejects the call with the given reason, and its late answer is dropped", async () => {
    const { peer, frames } = peerWithFrames();
    const call = peer.call("tools.execute", { tool: "t" }, "cb-1");
    expect(frames).toEqual([{ jsonrpc: "2.0", method: "tools.execute", params: { tool: "t" }, id: "cb-1" }]);
    const reason = new CarError("timeout", "gave up");
    expect(peer.abandon("cb-1", reason)).toBe(true);
    await expect(call).rejects.toBe(reason);
    expect(peer.has("cb-1")).toBe(false);
    expect(peer.settle("cb-1", { ok: true }, undefined)).toBe(false);
    expect(peer.abandon("cb-1", reason)).toBe(false);
  });

  it("an answered call cannot be abandoned; the answer and its frame size reach the caller", async () => {
    const { peer } = peerWithFrames();
    const sizes: number[] = [];
    const call = peer.call("tools.execute", {}, "cb-2", undefined, (n) => sizes.push(n));
    expect(peer.settle("cb-2", { done: 1 }, undefined, 42)).toBe(true);
    expect(peer.abandon("cb-2", new Error("late"))).toBe(false);
    await expect(call).resolves.toEqual({ done: 1 });
    expect(sizes).toEqual([42]);
  });

  it("an error answer rejects with ClientCallError; closing fails what waits and refuses new calls", async () => {
    const { peer } = peerWithFrames();
    const failing = peer.call("tools.execute", {}, "cb-3");
    peer.settle("cb-3", undefined, { code: -32000, message: "boom" });
    await expect(failing).rejects.toBeInstanceOf(ClientCallError);
    const waiting = peer.call("tools.execute", {}, "cb-4");
    const closed = new CarError("cancelled", "the connection closed");
    peer.close(closed);
    await expect(waiting).rejects.toBe(closed);
    await expect(peer.call("tools.execute", {}, "cb-5")).rejects.toBe(closed);
    expect(peer.abandon("cb-4", new Error("after close"))).toBe(false);
  });

  it("a signal still bounds a call: aborting rejects with its reason and drops the late answer", async () => {
    const { peer } = peerWithFrames();
    const stop = new AbortController();
    const call = peer.call("multi.run_agent", {}, "ma-1", stop.signal);
    stop.abort(new CarError("cancelled", "stop"));
    await expect(call).rejects.toMatchObject({ code: "cancelled" });
    expect(peer.settle("ma-1", {}, undefined)).toBe(false);
  });
});
