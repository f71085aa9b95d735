/**
 * The gate's two measured corpora, judged exactly as the hook judges a call:
 * `policyCheckDirs` with the operator rules in `corpus/policies` (a keyword,
 * a regex, two `deny_command` rules, a metadata-address rule) and the
 * built-in egress guard.
 *
 * - `evasions.json`: attempts to walk around the gate, each with the class it
 *   belongs to and the answer expected. `deny`: a rule or a proven dangerous
 *   form, with a fragment the reason must contain — a deny for some other
 *   reason does not count. `ask`: a command the gate cannot prove safe; a
 *   deny counts too, since it stops the command as well.
 * - `benign.json`: everyday developer commands and fetches; none may be
 *   denied, and few asked about (the target is at most 5%).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JsonObject } from "@car/ir";
import { type PolicyCheckResult, policyCheckDirs } from "../src/gate/index.ts";

export interface EvasionCase {
  class: string;
  tool: string;
  command: string;
  expect: "deny" | "ask";
  /** For `deny`: a fragment the denial's reasons must contain. */
  reason?: string;
}

export interface BenignCase {
  tool: string;
  command?: string;
  url?: string;
}

export interface CorpusReport {
  evasions: number;
  /** Evasions expected to be denied, and how many were, for the expected reason. */
  denyExpected: number;
  denied: number;
  deniedPercent: number;
  /** Evasions answered deny or ask, as expected: the share the gate stops. */
  stopped: number;
  stoppedPercent: number;
  /** Evasions let through, or denied for a reason other than the expected one. */
  missed: { case: EvasionCase; got: string }[];
  byClass: Record<string, { total: number; stopped: number }>;
  benign: number;
  benignDenied: { case: BenignCase; reasons: string }[];
  benignAsked: { case: BenignCase; reasons: string }[];
  benignAskedPercent: number;
}

const here = dirname(fileURLToPath(import.meta.url));

export function loadCorpus(): { evasions: EvasionCase[]; benign: BenignCase[] } {
  return {
    evasions: JSON.parse(readFileSync(join(here, "evasions.json"), "utf8")) as EvasionCase[],
    benign: JSON.parse(readFileSync(join(here, "benign.json"), "utf8")) as BenignCase[],
  };
}

function paramsFor(tool: string, text: string): JsonObject {
  return tool === "WebFetch" ? { url: text } : { command: text };
}

function reasonsOf(out: PolicyCheckResult, severity: "deny" | "ask"): string {
  return out.findings
    .filter((f) => f.severity === severity)
    .map((f) => `${f.rule}: ${f.reason}`)
    .join("; ");
}

export function evaluateCorpus(): CorpusReport {
  const { evasions, benign } = loadCorpus();
  const dirs = [join(here, "policies")];
  const cwd = mkdtempSync(join(tmpdir(), "car-corpus-"));
  const missed: CorpusReport["missed"] = [];
  const byClass: CorpusReport["byClass"] = {};
  let denyExpected = 0;
  let denied = 0;
  for (const c of evasions) {
    const out = policyCheckDirs(c.tool, paramsFor(c.tool, c.command), dirs, cwd);
    const reasons = reasonsOf(out, "deny");
    const ok =
      c.expect === "deny"
        ? out.answer === "deny" && reasons.toLowerCase().includes((c.reason ?? "").toLowerCase())
        : out.answer === "deny" || out.answer === "ask";
    if (c.expect === "deny") {
      denyExpected++;
      if (ok) denied++;
    }
    const entry = (byClass[c.class] ??= { total: 0, stopped: 0 });
    entry.total++;
    if (ok) entry.stopped++;
    else
      missed.push({ case: c, got: out.answer === "none" ? `nothing ${JSON.stringify(out.findings)}` : `${out.answer}: ${reasons || reasonsOf(out, "ask")}` });
  }
  const benignDenied: CorpusReport["benignDenied"] = [];
  const benignAsked: CorpusReport["benignAsked"] = [];
  for (const c of benign) {
    const out = policyCheckDirs(c.tool, paramsFor(c.tool, c.command ?? c.url ?? ""), dirs, cwd);
    if (out.answer === "deny") benignDenied.push({ case: c, reasons: reasonsOf(out, "deny") });
    if (out.answer === "ask") benignAsked.push({ case: c, reasons: reasonsOf(out, "ask") });
  }
  const stopped = evasions.length - missed.length;
  return {
    evasions: evasions.length,
    denyExpected,
    denied,
    deniedPercent: (100 * denied) / denyExpected,
    stopped,
    stoppedPercent: (100 * stopped) / evasions.length,
    missed,
    byClass,
    benign: benign.length,
    benignDenied,
    benignAsked,
    benignAskedPercent: (100 * benignAsked.length) / benign.length,
  };
}
