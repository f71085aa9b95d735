/**
 * A child process for the crash tests (run with tsx --conditions=source).
 * Mode `hang`: commits `count` counter increments, then starts one more
 * proposal whose first action writes state and whose second action never
 * finishes, and prints `MID` — the parent kills it there. Mode `loop`:
 * commits increments until killed. After every commit it prints `ACK <seq>`
 * (the proposal's last event), which is the parent's "acknowledged" mark.
 */
import { Runtime } from "../../runtime.ts";
import { sqlite } from "./sqlite-store.ts";

const [path, mode, countText] = process.argv.slice(2);
const store = sqlite(path!);
const rt = new Runtime({ store });
await rt.recover();
rt.registerTool("hang", () => {
  process.stdout.write("MID\n");
  return new Promise(() => {});
});

async function increment(n: number): Promise<void> {
  const current = (rt.state.get("counter") as number | undefined) ?? 0;
  const result = await rt.executeProposal({
    id: `inc-${process.pid}-${n}`,
    actions: [
      { id: "w", type: "state_write", parameters: { key: "counter", value: current + 1 } },
      { id: "log", type: "state_write", parameters: { key: `seen/${n}`, value: { pid: process.pid, n } }, dependencies: ["w"] },
    ],
  });
  if (result.results.some((r) => r.status !== "succeeded")) throw new Error(`increment ${n} did not commit`);
  const last = rt.events.query({ proposal_id: `inc-${process.pid}-${n}`, order: "desc", limit: 1 })[0]!;
  process.stdout.write(`ACK ${last.seq}\n`);
}

if (mode === "hang") {
  const count = Number(countText);
  for (let n = 0; n < count; n++) await increment(n);
  await rt.executeProposal({
    id: "doomed",
    actions: [
      { id: "w", type: "state_write", parameters: { key: "counter", value: -1 } },
      { id: "h", type: "tool_call", tool: "hang", parameters: {}, dependencies: ["w"] },
    ],
  });
} else {
  for (let n = 0; ; n++) await increment(n);
}
