// @ts-check
/**
 * The mutation score the goal is stated in: killed mutants over the
 * non-equivalent ones. Reads Stryker reports (the JSON report, or the
 * incremental files of per-file runs — same schema) and `classified.json`,
 * the survivors judged equivalent, unobservable through the adapter contract
 * by design, or not determined by the specification, each with its reason.
 * An entry is tied to a line range and to the text on its first line, so an
 * entry whose code moved is reported as stale instead of silently applying.
 *
 *   node mutation/score.mjs reports/mutation/mutation.json
 *   node mutation/score.mjs reports/inc-*.json
 *   node mutation/score.mjs reports/inc-b.json reports/inc-b-rerun.json   (the later report wins, mutant by mutant)
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";

const here = new URL(".", import.meta.url);
/** @type {{ file: string; from: number; to: number; text: string; kind: "equivalent" | "unobservable" | "unspecified"; reason: string; mutators?: string[]; replacements?: string[] }[]} */
const classified = JSON.parse(readFileSync(new URL("classified.json", here), "utf8")).entries;

const reports = process.argv.slice(2);
if (reports.length === 0) {
  process.stderr.write("usage: node mutation/score.mjs <stryker-report.json>...\n");
  process.exit(2);
}

/**
 * Later reports win. A report of part of a file (a `--mutate file:lines` re-run after new scenarios) over the same
 * source replaces only the results it has; over a changed source it replaces the file's results whole.
 * @type {Map<string, { source: string; mutants: any[] }>}
 */
const files = new Map();
const mutantKey = (/** @type {any} */ m) => `${JSON.stringify(m.location)}:${m.mutatorName}:${m.replacement ?? ""}`;
for (const path of reports) {
  const report = JSON.parse(readFileSync(path, "utf8"));
  for (const [name, entry] of Object.entries(report.files)) {
    const file = name.replace(/^.*?(packages\/)/, "$1");
    const earlier = files.get(file);
    if (earlier === undefined || earlier.source !== entry.source) {
      files.set(file, entry);
      continue;
    }
    const merged = new Map(earlier.mutants.map((m) => [mutantKey(m), m]));
    for (const m of entry.mutants) merged.set(mutantKey(m), m);
    files.set(file, { source: entry.source, mutants: [...merged.values()] });
  }
}

const stale = new Set();
const sum = { total: 0, killed: 0, equivalent: 0, unobservable: 0, unspecified: 0, survived: 0 };
const rows = [];
const open = [];
for (const [file, { source, mutants }] of [...files].sort()) {
  const lines = source.split("\n");
  const mine = classified.filter((c) => c.file === file);
  for (const c of mine) if (!(lines[c.from - 1] ?? "").includes(c.text)) stale.add(`${file}:${c.from} expected "${c.text}"`);
  const t = { total: 0, killed: 0, equivalent: 0, unobservable: 0, unspecified: 0, survived: 0 };
  for (const m of mutants) {
    if (m.status === "Ignored" || m.status === "CompileError") continue;
    t.total++;
    if (m.status === "Killed" || m.status === "Timeout") {
      t.killed++;
      continue;
    }
    const line = m.location.start.line;
    const hit = mine.find(
      (c) =>
        line >= c.from &&
        line <= c.to &&
        (lines[c.from - 1] ?? "").includes(c.text) &&
        (c.mutators === undefined || c.mutators.includes(m.mutatorName)) &&
        (c.replacements === undefined || c.replacements.includes(m.replacement)),
    );
    if (hit !== undefined) t[hit.kind]++;
    else {
      t.survived++;
      open.push(`${file}:${line}:${m.location.start.column} ${m.status} ${m.mutatorName} → ${JSON.stringify(m.replacement ?? "")}`);
    }
  }
  for (const k of Object.keys(sum)) sum[k] += t[k];
  rows.push([basename(file), t]);
}

const pct = (a, b) => (b === 0 ? "—" : `${((100 * a) / b).toFixed(1)} %`);
const line = ([name, t]) =>
  `| ${name} | ${t.total} | ${t.killed} | ${t.equivalent} | ${t.unobservable} | ${t.unspecified} | ${t.survived} | ${pct(t.killed, t.total)} | ` +
  `${pct(t.killed, t.total - t.equivalent - t.unobservable)} | ${pct(t.killed, t.total - t.equivalent - t.unobservable - t.unspecified)} |`;
console.log("| file | mutants | killed | equivalent | unobservable | unspecified | open | raw | non-equivalent | spec-determined |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const r of rows) console.log(line(r));
console.log(line(["**all**", sum]));
if (open.length > 0) console.log(`\nOpen survivors (${open.length}):\n${open.map((o) => `- ${o}`).join("\n")}`);
if (stale.size > 0) {
  console.log(`\nStale classifications (the code moved; re-check them):\n${[...stale].map((s) => `- ${s}`).join("\n")}`);
  process.exitCode = 1;
}
