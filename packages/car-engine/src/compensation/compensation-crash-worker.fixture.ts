/**
 * A child process for the compensation crash test (run with tsx
 * --conditions=source): on a SQLite store, it runs a proposal that writes
 * three files and then fails, with `rollback: "compensate"`. The
 * compensation of the second file hangs: the worker prints `MID` there and
 * waits to be killed with SIGKILL.
 */
import { unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ActionInput } from "@car/ir";
import { sqlite } from "../backends/sqlite/sqlite-store.ts";
import { Runtime } from "../runtime.ts";

const [db, dir] = process.argv.slice(2);
const rt = new Runtime({ store: sqlite(db!), rollback: "compensate" });
await rt.recover();
rt.registerTool("write_file", (p) => {
  writeFileSync(join(dir!, p["name"] as string), "x");
  return true;
});
rt.registerTool("remove_file", (p) => {
  if (p["name"] === "b") {
    process.stdout.write("MID\n");
    return new Promise(() => {});
  }
  unlinkSync(join(dir!, p["name"] as string));
  return true;
});
rt.registerTool("boom", () => {
  throw new Error("the deploy broke");
});
const writes = (name: string, after?: string): ActionInput => ({
  id: `w_${name}`,
  type: "tool_call",
  tool: "write_file",
  parameters: { name },
  reversibility: "compensable",
  compensation: { type: "tool", tool: "remove_file", parameters: { name } },
  ...(after === undefined ? {} : { dependencies: [after] }),
});
await rt.executeProposal({
  id: "saga",
  actions: [writes("a"), writes("b", "w_a"), writes("c", "w_b"), { id: "fail", type: "tool_call", tool: "boom", dependencies: ["w_c"] }],
});
