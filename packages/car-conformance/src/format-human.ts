/**
 * The human summary: one line per capability, and for every failed or
 * unjudged scenario its spec citation and each mismatch as expected versus
 * actual, then the verdict — CONFORMANT only for a full run that passed.
 */
import type { ConformanceReport } from "./report.ts";

function show(value: unknown): string {
  if (value === undefined) return "(absent)";
  const text = JSON.stringify(value);
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

export function formatHuman(report: ConformanceReport, color = false): string {
  const paint = (code: number, s: string): string => (color ? `\u001b[${code}m${s}\u001b[0m` : s);
  const green = (s: string): string => paint(32, s);
  const red = (s: string): string => paint(31, s);
  const yellow = (s: string): string => paint(33, s);
  const dim = (s: string): string => paint(2, s);
  const lines: string[] = [
    `RuntimeBench ${report.suite_version} — ${report.runtime}`,
    dim(`spec: ${report.spec_revision}`),
    dim(`features declared: ${report.features.length > 0 ? report.features.join(", ") : "none"}`),
    "",
  ];
  const width = Math.max(...report.capabilities.map((c) => c.capability.length + 11), 20);
  for (const cap of report.capabilities) {
    const label = `${cap.capability} (${cap.required ? "required" : "optional"})`.padEnd(width + 2);
    if (!cap.checked) {
      lines.push(dim(`  – ${label}not checked (feature not declared)`));
      continue;
    }
    const counts = [`${cap.passed}/${cap.scenarios.length} passed`];
    if (cap.failed > 0) counts.push(`${cap.failed} failed`);
    if (cap.errors > 0) counts.push(`${cap.errors} not judged`);
    if (cap.skipped > 0) counts.push(`${cap.skipped} skipped`);
    lines.push(`  ${cap.failed > 0 ? red("✗") : cap.errors > 0 ? yellow("?") : green("✓")} ${label}${counts.join(", ")}`);
    for (const s of cap.scenarios) {
      if (s.status === "skipped") {
        lines.push(dim(`      – ${s.id}: skipped (${s.skip_reason ?? "not applicable"})`));
        continue;
      }
      if (s.status === "passed") continue;
      lines.push(`      ${s.status === "error" ? yellow("?") : red("✗")} ${s.id} — ${s.title}`);
      lines.push(dim(`          spec: ${s.spec.file} § ${s.spec.section}`));
      for (const f of s.failures) {
        lines.push(`          ${f.where} ${f.path}: ${f.message}`);
        if (s.status === "error") continue;
        lines.push(`            expected: ${show(f.expected)}`);
        lines.push(`            actual:   ${show(f.actual)}`);
      }
    }
  }
  lines.push("");
  const totals = `${report.passed} passed, ${report.failed} failed, ${report.errors} not judged, ${report.skipped} skipped in ${(report.duration_ms / 1000).toFixed(1)} s`;
  const failing = report.capabilities.filter((c) => c.failed > 0).map((c) => c.capability);
  const notChecked = report.not_checked.length > 0 ? `; not checked: ${report.not_checked.join(", ")}` : "";
  switch (report.verdict) {
    case "conformant":
      lines.push(green(`CONFORMANT — every required capability passed (${totals}${notChecked})`));
      break;
    case "not_conformant":
      lines.push(red(`NOT CONFORMANT — failing: ${failing.join(", ")} (${totals})`));
      break;
    case "inconclusive": {
      const skipped = report.capabilities.filter((c) => c.required).flatMap((c) => c.scenarios.filter((s) => s.status === "skipped").map((s) => s.id));
      const why =
        report.errors > 0
          ? `${report.errors} scenarios could not be judged: the runtime was not isolated`
          : `required scenarios were not run: ${skipped.join(", ")}`;
      lines.push(yellow(`INCONCLUSIVE — ${why} (${totals})`));
      break;
    }
    case "partial": {
      const filters = [...report.filters.capabilities.map((c) => `--capability ${c}`), ...report.filters.scenarios.map((s) => `--scenario ${s}`)].join(" ");
      const outcome =
        failing.length > 0
          ? red(`failing: ${failing.join(", ")}`)
          : report.errors > 0
            ? yellow("some scenarios not judged")
            : green("everything selected passed");
      lines.push(`PARTIAL — a filtered run (${filters}) is no verdict on the runtime; ${outcome} (${totals})`);
      break;
    }
  }
  return `${lines.join("\n")}\n`;
}
