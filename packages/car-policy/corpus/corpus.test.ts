import { describe, expect, it } from "vitest";
import { evaluateCorpus } from "./evaluate.ts";

describe("the gate's evasion and benign corpora", () => {
  const report = evaluateCorpus();

  it("holds at least 350 evasions and 500 benign calls", () => {
    expect(report.evasions).toBeGreaterThanOrEqual(350);
    expect(report.benign).toBeGreaterThanOrEqual(500);
  });

  it("stops every evasion: a deny, or an ask for one it cannot prove safe", () => {
    expect(report.missed.map((m) => `[${m.case.class}] ${m.case.command} -> ${m.got}`)).toEqual([]);
  });

  it("denies at least 95% of the evasions a rule or a proven form must deny, each for its expected reason", () => {
    expect(report.deniedPercent).toBeGreaterThanOrEqual(95);
  });

  it("denies no benign command", () => {
    expect(report.benignDenied.map((b) => `${b.case.command ?? b.case.url} -> ${b.reasons}`)).toEqual([]);
  });

  it("asks about at most 5% of the benign commands", () => {
    expect(report.benignAskedPercent, report.benignAsked.map((b) => `${b.case.command ?? b.case.url} -> ${b.reasons}`).join("\n")).toBeLessThanOrEqual(5);
  });
});
