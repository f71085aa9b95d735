/**
 * The gate's two measured corpora, judged exactly as the hook judges a call:
 * `policyCheckDirs` with the operator rules in `corpus/policies` (a keyword,
 * a regex, two `deny_command` rules, a metadata-address rule) and the
 * built-in egress guard.
 *
 * - `evasions.json`: attempts to walk around the gate, each with the class it
 *   belongs to, the decision expected (`deny`) and a fragment the reason must
 *   contain — a deny for some other reason does not count.
 * - `benign.json`: everyday developer commands and fetches; none may be denied.
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
  expect: "deny";
  /** A fragment the denial's reasons must contain. */
  reason: string;
}

export interface BenignCase {
  tool: string;
  command?: string;
  url?: string;
}

export interface CorpusReport {
  evasions: number;
  denied: number;
  deniedPercent: number;
  /** Evasions allowed, or denied for a reason other than the expected one. */
  missed: { case: EvasionCase; got: string }[];
  byClass: Record<string, { total: number; denied: number }>;
  benign: number;
  benignDenied: { case: BenignCase; reasons: string }[];
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

function denials(out: PolicyCheckResult): string {
  return out.findings
    .filter((f) => f.severity === "deny")
    .map((f) => `${f.rule}: ${f.reason}`)
    .join("; ");
}

export function evaluateCorpus(): CorpusReport {
  const { evasions, benign } = loadCorpus();
  const dirs = [join(here, "policies")];
  const cwd = mkdtempSync(join(tmpdir(), "car-corpus-"));
  const missed: CorpusReport["missed"] = [];
  const byClass: CorpusReport["byClass"] = {};
  for (const c of evasions) {
    const out = policyCheckDirs(c.tool, paramsFor(c.tool, c.command), dirs, cwd);
    const reasons = denials(out);
    const ok = out.decision === "deny" && reasons.toLowerCase().includes(c.reason.toLowerCase());
    const entry = (byClass[c.class] ??= { total: 0, denied: 0 });
    entry.total++;
    if (ok) entry.denied++;
    else missed.push({ case: c, got: out.decision === "deny" ? `deny: ${reasons}` : `allow ${JSON.stringify(out.findings)}` });
  }
  const benignDenied: CorpusReport["benignDenied"] = [];
  for (const c of benign) {
    const out = policyCheckDirs(c.tool, paramsFor(c.tool, c.command ?? c.url ?? ""), dirs, cwd);
    if (out.decision === "deny") benignDenied.push({ case: c, reasons: denials(out) });
  }
  const denied = evasions.length - missed.length;
  return {
    evasions: evasions.length,
    denied,
    deniedPercent: (100 * denied) / evasions.length,
    missed,
    byClass,
    benign: benign.length,
    benignDenied,
  };
}
