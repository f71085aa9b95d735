/**
 * The SQLite store against the in-memory one, measured in the same run:
 * 10k actions executed through `Runtime.executeProposal`, as one proposal,
 * as 100 proposals of 100 and as 1 000 proposals of 10, for no-op tool calls
 * (3 events per action) and for state writes (4 events and a state row per
 * action). Prints events appended per second and the SQLite cost per action
 * as a ratio of the in-memory engine's (the goal is at most 2× when a
 * proposal batches many actions into its commit transaction).
 * Run with `npm run bench:sqlite`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Runtime } from "../src/index.ts";
import type { ActionInput, ActionProposalInput } from "@car/ir";
import type { RuntimeStore } from "../src/index.ts";
import { sqlite } from "../src/backends/sqlite/index.ts";

const TOTAL = 10_000;
type Kind = "noop" | "write";

function proposal(kind: Kind, size: number, p: number): ActionProposalInput {
  const actions = Array.from(
    { length: size },
    (_, i): ActionInput =>
      kind === "noop"
        ? { id: `a${i}`, type: "tool_call", tool: "noop", parameters: {} }
        : { id: `a${i}`, type: "state_write", parameters: { key: `k${p}_${i}`, value: { n: i } } },
  );
  return { id: `p${p}`, actions };
}

async function run(store: () => RuntimeStore, kind: Kind, size: number): Promise<{ ms: number; events: number }> {
  const s = store();
  const rt = new Runtime({ store: s });
  rt.registerTool("noop", () => null);
  const proposals = Array.from({ length: TOTAL / size }, (_, p) => proposal(kind, size, p));
  const t0 = performance.now();
  for (const p of proposals) await rt.executeProposal(p);
  const ms = performance.now() - t0;
  const events = rt.events.count();
  await rt.close();
  return { ms, events };
}

async function best(store: () => RuntimeStore, kind: Kind, size: number, repeats: number): Promise<{ ms: number; events: number }> {
  let out = { ms: Infinity, events: 0 };
  for (let r = 0; r < repeats; r++) {
    const m = await run(store, kind, size);
    if (m.ms < out.ms) out = m;
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), "car-bench-sqlite-"));
let n = 0;
const fresh = (synchronous: "full" | "normal") => () => sqlite(join(dir, `bench-${n++}.db`), { synchronous });

try {
  // Warm up every path.
  for (const kind of ["noop", "write"] as const) {
    await run(() => new Runtime().store, kind, 1_000);
    await run(fresh("normal"), kind, 1_000);
  }
  console.log(`10k actions per run; best of 3; SQLite at ${dir}`);
  console.log(
    "workload  actions/proposal  events   in-memory µs/action  events/s    sqlite(full) µs/action  events/s  ratio   sqlite(normal) µs/action  ratio",
  );
  for (const kind of ["noop", "write"] as const) {
    for (const size of [10_000, 100, 10]) {
      const mem = await best(() => new Runtime().store, kind, size, 3);
      const full = await best(fresh("full"), kind, size, 3);
      const normal = await best(fresh("normal"), kind, size, 3);
      const us = (ms: number) => ((ms * 1000) / TOTAL).toFixed(2);
      const eps = (m: { ms: number; events: number }) => Math.round(m.events / (m.ms / 1000)).toLocaleString("en-US");
      console.log(
        `${kind.padEnd(8)}  ${String(size).padStart(16)}  ${String(full.events).padStart(6)}  ${us(mem.ms).padStart(19)}  ${eps(mem).padStart(10)}  ${us(full.ms).padStart(22)}  ${eps(full).padStart(8)}  ${(full.ms / mem.ms).toFixed(2).padStart(5)}×  ${us(normal.ms).padStart(24)}  ${(normal.ms / mem.ms).toFixed(2).padStart(5)}×`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
