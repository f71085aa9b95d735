/**
 * `pnpm --filter @car/policy corpus`: the evasion corpus's denied share and
 * the benign corpus's denials, with every miss listed. Exits 1 when either
 * goal is missed (≥ 95% of evasions denied, 0 benign commands denied).
 */
import { evaluateCorpus } from "./evaluate.ts";

const report = evaluateCorpus();
for (const m of report.missed) console.log(`MISSED [${m.case.class}] ${JSON.stringify(m.case.command)} -> ${m.got}`);
for (const b of report.benignDenied) console.log(`BENIGN DENIED ${JSON.stringify(b.case.command ?? b.case.url)} -> ${b.reasons}`);
for (const [name, c] of Object.entries(report.byClass)) console.log(`  ${name.padEnd(22)} ${c.denied}/${c.total}`);
console.log(`evasions denied: ${report.denied}/${report.evasions} (${report.deniedPercent.toFixed(1)}%)`);
console.log(`benign denied:   ${report.benignDenied.length}/${report.benign}`);
process.exitCode = report.deniedPercent >= 95 && report.benignDenied.length === 0 ? 0 : 1;
