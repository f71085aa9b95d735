/**
 * A worker process for the race and crash tests and the benchmark (run with
 * `node --conditions=source --import tsx`). Arguments: a JSON object
 * `{ url, name, mode, ms, shared, overlap, ownKeys, report, tx, backend }`;
 * `backend` is `postgres` (default, `url` is a postgres:// URL) or `sqlite`
 * (`url` is a file path: the benchmark's one-process baseline).
 *
 * - `race`: prints `READY`, waits for a line on stdin, then for `ms`
 *   milliseconds runs read-modify-write proposals: each picks two distinct
 *   counters — each from `shared` with probability `overlap`, else from the
 *   worker's own `ownKeys` counters — reads them (`state_read`), adds one
 *   (a tool) and writes them back. With `report: "lines"` it prints every
 *   proposal's outcome as a JSON line; it ends with `DONE <json summary>`
 *   (committed, aborted, and the CPU milliseconds the loop used).
 * - `hang`: prints `READY`, then runs one proposal that writes a key and
 *   then blocks in a tool forever, printing `MID <proposal id>` when it got
 *   there (the parent kills it with SIGKILL).
 */
import { createInterface } from "node:readline";
import type { ActionInput } from "@car/ir";
import type { TransactionMode } from "@car/verify";
import { Runtime } from "../../runtime.ts";
import { sqlite } from "../sqlite/index.ts";
import { postgres } from "./index.ts";

interface WorkerArgs {
  url: string;
  name: string;
  mode: "race" | "hang";
  ms: number;
  shared: string[];
  overlap: number;
  ownKeys: number;
  report: "lines" | "summary";
  tx: TransactionMode;
  backend?: "postgres" | "sqlite";
}

const args = JSON.parse(process.argv[2]!) as WorkerArgs;
const pgStore = args.backend === "sqlite" ? undefined : postgres(args.url, { mode: args.tx, poolSize: 2 });
await pgStore?.ready();
const store = pgStore ?? sqlite(args.url);
const rt = new Runtime({ store });
rt.registerTool("inc", (params) => (typeof params["n"] === "number" ? params["n"] : 0) + 1);
rt.registerTool("hang", () => new Promise(() => {}));

function pickKeys(): [string, string] {
  const pick = (): string =>
    Math.random() < args.overlap ? args.shared[Math.floor(Math.random() * args.shared.length)]! : `${args.name}/${Math.floor(Math.random() * args.ownKeys)}`;
  const a = pick();
  for (;;) {
    const b = pick();
    if (b !== a) return [a, b];
  }
}

function increments(keys: readonly string[]): ActionInput[] {
  return keys.flatMap((key, i) => [
    { id: `r${i}`, type: "state_read", parameters: { key } },
    { id: `i${i}`, type: "tool_call", tool: "inc", parameters: { n: `$r${i}.output` }, dependencies: [`r${i}`] },
    { id: `w${i}`, type: "state_write", parameters: { key, value: `$i${i}.output` }, dependencies: [`i${i}`] },
  ]);
}

process.stdout.write("READY\n");

if (args.mode === "hang") {
  const id = `${args.name}-hang`;
  rt.registerTool("announce", () => {
    process.stdout.write(`MID ${id}\n`);
    return true;
  });
  await rt.executeProposal({
    id,
    actions: [
      { id: "w", type: "state_write", parameters: { key: "doomed", value: 1 } },
      ...increments(["shared/0"]),
      { id: "say", type: "tool_call", tool: "announce", parameters: {}, dependencies: ["w", "w0"] },
      { id: "h", type: "tool_call", tool: "hang", parameters: {}, dependencies: ["say"] },
    ],
  });
} else {
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once("line", () => resolve()));
  const deadline = Date.now() + args.ms;
  const cpu = process.cpuUsage();
  let committed = 0;
  let aborted = 0;
  for (let n = 0; Date.now() < deadline; n++) {
    const id = `${args.name}-${n}`;
    const keys = pickKeys();
    const result = await rt.executeProposal({ id, actions: increments(keys) });
    const rolledBack = result.results.some((r) => r.rolled_back === true);
    if (rolledBack) aborted++;
    else committed++;
    if (args.report === "lines") {
      const reason =
        rolledBack && pgStore !== undefined
          ? ((await pgStore.events.queryShared({ proposal_id: id, kinds: ["proposal_completed"] })).at(-1)?.data["reason"] ?? null)
          : null;
      process.stdout.write(`${JSON.stringify({ id, keys, outcome: rolledBack ? "rolled_back" : "committed", reason })}\n`);
    }
  }
  const used = process.cpuUsage(cpu);
  process.stdout.write(`DONE ${JSON.stringify({ committed, aborted, cpu_ms: (used.user + used.system) / 1000 })}\n`);
  await rt.close();
}
