/**
 * `pnpm --filter @car/policy corpus`: how the gate answers both corpora,
 * with every miss listed. Prints the share of attacks stopped (denied or
 * asked about), the share denied of those a rule or a proven form must deny,
 * and the benign commands denied and asked about. Exits 1 when a goal is
 * missed: every attack stopped, at least 95% of the deny-expected ones
 * denied for their reason, no benign command denied, at most 5% asked about.
 */
import { evaluateCorpus } from "./evaluate.ts";

const report = evaluateCorpus();
for (const m of report.missed) console.log(`MISSED [${m.case.class}] ${JSON.stringify(m.case.command)} -> ${m.got}`);
for (const b of report.benignDenied) console.log(`BENIGN DENIED ${JSON.stringify(b.case.command ?? b.case.url)} -> ${b.reasons}`);
for (const b of report.benignAsked) console.log(`benign asked  ${JSON.stringify(b.case.command ?? b.case.url)} -> ${b.reasons}`);
for (const [name, c] of Object.entries(report.byClass)) console.log(`  ${name.padEnd(34)} ${c.stopped}/${c.total}`);
console.log(`attacks stopped (deny or ask): ${report.stopped}/${report.evasions} (${report.stoppedPercent.toFixed(1)}%)`);
console.log(`deny-expected denied:          ${report.denied}/${report.denyExpected} (${report.deniedPercent.toFixed(1)}%)`);
console.log(`benign denied:                 ${report.benignDenied.length}/${report.benign}`);
console.log(`benign asked:                  ${report.benignAsked.length}/${report.benign} (${report.benignAskedPercent.toFixed(1)}%)`);
const met = report.stopped === report.evasions && report.deniedPercent >= 95 && report.benignDenied.length === 0 && report.benignAskedPercent <= 5;
process.exitCode = met ? 0 : 1;
