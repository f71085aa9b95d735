/**
 * The baseline `bench:verify` measures `car verify` against, in a process of
 * its own: read the proposal file, then `JSON.parse` + `parseProposal` (CPU
 * time of that step, fastest of 2, each after a full collection). Prints
 * `BASE {"cpu": ms, "startRssKb": …}`: the RSS before reading, so the
 * bench can take this process's growth (text and parsed proposal, no check)
 * from its peak RSS.
 */
import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { parseProposal } from "@car/ir";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const startRssKb = process.memoryUsage().rss / 1024;
const text = readFileSync(process.argv[2]!, "utf8");
let cpu = Number.POSITIVE_INFINITY;
let kept: unknown;
for (let r = 0; r < 2; r++) {
  kept = undefined;
  gc();
  const c0 = process.cpuUsage();
  kept = parseProposal(JSON.parse(text));
  const c = process.cpuUsage(c0);
  cpu = Math.min(cpu, (c.user + c.system) / 1000);
}
console.log(`BASE ${JSON.stringify({ cpu, startRssKb, actions: (kept as { actions: unknown[] }).actions.length })}`);
