/**
 * JUnit XML, so CI systems show each scenario as a test case (one suite per
 * capability). Carries what strict validators expect (`errors`, `timestamp`,
 * `hostname` on every suite) and, as properties, what the verdict rests on:
 * suite version, spec revision, filters and declared features.
 */
import { hostname } from "node:os";
import type { ConformanceReport } from "./report.ts";

function esc(s: string): string {
  return s
    .replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");
}

function property(name: string, value: string): string {
  return `<property name="${esc(name)}" value="${esc(value)}"/>`;
}

export function formatJunit(report: ConformanceReport, host: string = hostname()): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const tests = report.passed + report.failed + report.skipped + report.errors;
  out.push(
    `<testsuites name="${esc(`RuntimeBench ${report.runtime}`)}" tests="${tests}" failures="${report.failed}" errors="${report.errors}" skipped="${report.skipped}" time="${(report.duration_ms / 1000).toFixed(3)}" timestamp="${esc(report.timestamp)}">`,
  );
  const runProperties = [
    property("verdict", report.verdict),
    property("suite_version", report.suite_version),
    property("spec_revision", report.spec_revision),
    property("features", report.features.join(",")),
    property("not_checked", report.not_checked.join(",")),
    property("filter_capabilities", report.filters.capabilities.join(",")),
    property("filter_scenarios", report.filters.scenarios.join(",")),
  ].join("");
  for (const cap of report.capabilities) {
    const time = cap.scenarios.reduce((n, s) => n + s.duration_ms, 0) / 1000;
    out.push(
      `  <testsuite name="${esc(cap.capability)}" tests="${cap.scenarios.length}" failures="${cap.failed}" errors="${cap.errors}" skipped="${cap.skipped}" time="${time.toFixed(3)}" timestamp="${esc(report.timestamp)}" hostname="${esc(host)}">`,
    );
    out.push(`    <properties>${property("required", String(cap.required))}${property("checked", String(cap.checked))}${runProperties}</properties>`);
    for (const s of cap.scenarios) {
      const head = `    <testcase classname="${esc(cap.capability)}" name="${esc(s.id)}" time="${(s.duration_ms / 1000).toFixed(3)}"`;
      if (s.status === "passed") {
        out.push(`${head}/>`);
        continue;
      }
      out.push(`${head}>`);
      const detail = s.failures
        .map((f) => `${f.where} ${f.path}: ${f.message}\n  expected: ${JSON.stringify(f.expected)}\n  actual:   ${JSON.stringify(f.actual) ?? "(absent)"}`)
        .join("\n");
      const message = esc(`${s.title} [${s.spec.file} § ${s.spec.section}]`);
      if (s.status === "skipped") out.push(`      <skipped message="${esc(s.skip_reason ?? "not applicable")}"/>`);
      else if (s.status === "error") out.push(`      <error message="${esc(s.failures[0]?.message ?? "not judged")}" type="isolation">${esc(detail)}</error>`);
      else out.push(`      <failure message="${message}" type="mismatch">${esc(detail)}</failure>`);
      out.push("    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return `${out.join("\n")}\n`;
}
