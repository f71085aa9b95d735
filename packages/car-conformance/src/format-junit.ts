/** JUnit XML, so CI systems show each scenario as a test case (one suite per capability). */
import type { ConformanceReport } from "./report.ts";

function esc(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");
}

export function formatJunit(report: ConformanceReport): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(`<testsuites name="${esc(`RuntimeBench ${report.runtime}`)}" tests="${report.passed + report.failed + report.skipped}" failures="${report.failed}" skipped="${report.skipped}" time="${(report.duration_ms / 1000).toFixed(3)}">`);
  for (const cap of report.capabilities) {
    const time = cap.scenarios.reduce((n, s) => n + s.duration_ms, 0) / 1000;
    out.push(`  <testsuite name="${esc(cap.capability)}" tests="${cap.scenarios.length}" failures="${cap.failed}" skipped="${cap.skipped}" time="${time.toFixed(3)}">`);
    out.push(`    <properties><property name="required" value="${cap.required}"/></properties>`);
    for (const s of cap.scenarios) {
      const head = `    <testcase classname="${esc(cap.capability)}" name="${esc(s.id)}" time="${(s.duration_ms / 1000).toFixed(3)}"`;
      if (s.status === "passed") {
        out.push(`${head}/>`);
        continue;
      }
      out.push(`${head}>`);
      if (s.status === "skipped") out.push(`      <skipped message="${esc(s.skip_reason ?? "not applicable")}"/>`);
      else {
        const detail = s.failures.map((f) => `${f.where} ${f.path}: ${f.message}\n  expected: ${JSON.stringify(f.expected)}\n  actual:   ${JSON.stringify(f.actual) ?? "(absent)"}`).join("\n");
        out.push(`      <failure message="${esc(`${s.title} [${s.spec.file} § ${s.spec.section}]`)}">${esc(detail)}</failure>`);
      }
      out.push("    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return `${out.join("\n")}\n`;
}
