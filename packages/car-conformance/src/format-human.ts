/**
 * The human summary: one line per capability, and for every failed
 * scenario its spec citation and each mismatch as expected versus actual.
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
  const dim = (s: string): string => paint(2, s);
  const lines: string[] = [`RuntimeBench — ${report.runtime}`, ""];
  const width = Math.max(...report.capabilities.map((c) => c.capability.length + (c.required ? 11 : 11)), 20);
  for (const cap of report.capabilities) {
    const label = `${cap.capability} (${cap.required ? "required" : "optional"})`.padEnd(width + 2);
    const counts = [`${cap.passed}/${cap.scenarios.length} passed`];
    if (cap.failed > 0) counts.push(`${cap.failed} failed`);
    if (cap.skipped > 0) counts.push(`${cap.skipped} skipped`);
    lines.push(`  ${cap.failed > 0 ? red("✗") : green("✓")} ${label}${counts.join(", ")}`);
    for (const s of cap.scenarios) {
      if (s.status === "skipped") {
        lines.push(dim(`      – ${s.id}: skipped (${s.skip_reason ?? "not applicable"})`));
        continue;
      }
      if (s.status !== "failed") continue;
      lines.push(`      ${red("✗")} ${s.id} — ${s.title}`);
      lines.push(dim(`          spec: ${s.spec.file} § ${s.spec.section}`));
      for (const f of s.failures) {
        lines.push(`          ${f.where} ${f.path}: ${f.message}`);
        lines.push(`            expected: ${show(f.expected)}`);
        lines.push(`            actual:   ${show(f.actual)}`);
      }
    }
  }
  lines.push("");
  const failingRequired = report.capabilities.filter((c) => c.required && c.failed > 0).map((c) => c.capability);
  const totals = `${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped in ${(report.duration_ms / 1000).toFixed(1)} s`;
  lines.push(
    report.conformant
      ? green(`CONFORMANT — every required capability passed (${totals})`)
      : red(`NOT CONFORMANT — required capabilities failing: ${failingRequired.join(", ")} (${totals})`),
  );
  return `${lines.join("\n")}\n`;
}
