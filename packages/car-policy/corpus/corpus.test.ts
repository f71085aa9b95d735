import { describe, expect, it } from "vitest";
import { evaluateCorpus } from "./evaluate.ts";

describe("the gate's evasion and benign corpora", () => {
  const report = evaluateCorpus();

  it("holds at least 150 evasions and 300 benign calls", () => {
    expect(report.evasions).toBeGreaterThanOrEqual(150);
    expect(report.benign).toBeGreaterThanOrEqual(300);
  });

  it("denies at least 95% of the evasions, each for its expected reason", () => {
    expect(report.deniedPercent, report.missed.map((m) => `${m.case.command} -> ${m.got}`).join("\n")).toBeGreaterThanOrEqual(95);
  });

  it("denies no benign command", () => {
    expect(report.benignDenied.map((b) => `${b.case.command ?? b.case.url} -> ${b.reasons}`)).toEqual([]);
  });
});
