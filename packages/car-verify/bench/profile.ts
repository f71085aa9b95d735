/**
 * A CPU profile of one check on one bench shape, for finding what grows
 * faster than the input: `SHAPE=conflict N=100000 CHECK=transactionCheck
 * npm run bench:profile` writes `<shape>-<n>-<check>.cpuprofile` (open it in
 * Chrome DevTools) to `PROFILE_DIR` (default: the working directory), and
 * prints the check's CPU time against JSON.parse + parseProposal. Add
 * `NODE_OPTIONS=--trace-gc` to see the collections the check causes.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { type ParsedProposal, parseProposalWithGraph } from "@car/ir";
import { setNativeMode } from "@car/native";
import { simulate, transactionCheck, verify } from "../src/index.ts";
import { SHAPES, type Shape } from "./generate.ts";
import { collectGarbage, time } from "./timing.ts";

const shape = (process.env["SHAPE"] ?? "random") as Shape;
const n = Number(process.env["N"] ?? 100_000);
const check = process.env["CHECK"] ?? "verify";
const checks: Record<string, (p: ParsedProposal) => unknown> = { verify, simulate: (p) => simulate(p), transactionCheck };
const run = checks[check];
if (run === undefined || SHAPES[shape] === undefined) throw new Error(`SHAPE is one of ${Object.keys(SHAPES)}, CHECK one of ${Object.keys(checks)}`);

setNativeMode("off");
let text: string | undefined = SHAPES[shape](n);
// The pair, as in bench/run.ts: the checks use the graph the parse built, as `car verify` does.
const base = time(1, () => parseProposalWithGraph(JSON.parse(text!)));
text = undefined;
const proposal = base.value;

const session = new Session();
session.connect();
await session.post("Profiler.enable");
// The parse's garbage is collected before the profile starts, so its "(garbage collector)" is the check's own.
collectGarbage();
await session.post("Profiler.start");
const c0 = process.cpuUsage();
run(proposal);
const used = process.cpuUsage(c0);
const { profile } = await session.post("Profiler.stop");
const measured = { cpu: (used.user + used.system) / 1000 };
const file = join(process.env["PROFILE_DIR"] ?? ".", `${shape}-${n}-${check}.cpuprofile`);
writeFileSync(file, JSON.stringify(profile));
console.log(
  `${shape} n=${n}: ${check} ${measured.cpu.toFixed(0)} ms CPU, baseline ${base.cpu.toFixed(0)} ms (${(measured.cpu / base.cpu).toFixed(2)}x); profile in ${file}`,
);
