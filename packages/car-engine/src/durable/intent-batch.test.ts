/** IntentBatch: calls started together share one write; with other proposals open, so do calls of the next event-loop turn. */
import { describe, expect, it } from "vitest";
import { IntentBatch } from "./intent-batch.ts";

/** Two requests, the second from a macrotask queued in the first's turn (as another connection's message would be). */
async function twoTurns(othersOpen: boolean): Promise<number> {
  let writes = 0;
  const batch = new IntentBatch(
    () => {
      writes++;
    },
    () => othersOpen,
  );
  const first = batch.request();
  const second = new Promise<void>((resolve, reject) => setImmediate(() => batch.request().then(resolve, reject)));
  await Promise.all([first, second]);
  return writes;
}

describe("IntentBatch", () => {
  it("writes once for requests of one turn, and answers each after a write that followed it", async () => {
    const order: string[] = [];
    const batch = new IntentBatch(() => {
      order.push("write");
    });
    await Promise.all([batch.request().then(() => order.push("a")), batch.request().then(() => order.push("b"))]);
    expect(order).toEqual(["write", "a", "b"]);
  });

  it("with other proposals open, waits one turn so a request of the next turn shares the write", async () => {
    expect(await twoTurns(true)).toBe(1);
  });

  it("with no other proposal open, a lone proposal's request is written without waiting a turn", async () => {
    expect(await twoTurns(false)).toBe(2);
  });
});
