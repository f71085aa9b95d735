/**
 * The egress guard: refuses shell commands and fetches shaped like data
 * leaving the machine or code arriving to run, judged on what a shell would
 * actually execute (see `command-position.ts`), never on substrings.
 *
 * Denied: a raw network client (`nc`, `netcat`, `ncat`, `socat`) run as a
 * command; a redirection to `/dev/tcp/`; a download from an unlisted host
 * piped into a shell; an upload (`curl -X POST`, `-d`, `-F`, `-T`,
 * `wget --post…`) to an unlisted host; `base64 -d` in a command line that
 * also reaches the network or feeds a shell. Warned: a download from an
 * allowlisted host piped into a shell (the installers people really run), and
 * a fetch from an unlisted host. Loopback is not egress.
 */
import { getOwn, type JsonValue } from "@car/ir";
import { ALLOW, type InspectionResult, type Inspector } from "../inspector.ts";
import { type Invocation, pipelinesOf, readsScriptFromStdin, scriptInvocations, SHELLS } from "./command-position.ts";
import { isAllowlisted, isLoopback, urlHosts } from "./hosts.ts";
import { DOWNLOADERS, networkUse } from "./network-clients.ts";

/**
 * Hosts fetched from without a finding. Subdomains count (`api.github.com`).
 * The installer hosts are here on purpose: their `curl … | sh` is how the
 * tools are installed, so piping them into a shell warns instead of denying.
 */
export const DEFAULT_ALLOWED_HOSTS: readonly string[] = [
  "github.com",
  "githubusercontent.com",
  "docs.rs",
  "crates.io",
  "sh.rustup.rs",
  "bun.sh",
  "astral.sh",
  "ollama.com",
  "claude.ai",
];

const NETWORK_CLIENTS = new Set(["nc", "netcat", "ncat", "socat"]);
/** Interpreters that execute a program piped to them, besides the shells. */
const INTERPRETERS = new Set(["python", "python3", "perl", "ruby", "node"]);
const RAW_SOCKETS = ["/dev/tcp/", "/dev/udp/"];

/** Which parameter carries the text for each CAR tool the guard reads. */
const TOOL_PARAM: Record<string, "command" | "url"> = { shell: "command", webfetch: "url", http: "url" };

export interface EgressOptions {
  /** Replaces the default allowlist. */
  allowedHosts?: readonly string[];
}

interface Finding {
  deny: boolean;
  reason: string;
}

export class EgressInspector implements Inspector {
  readonly name = "egress";
  readonly allowedHosts: readonly string[];

  constructor(options: EgressOptions = {}) {
    this.allowedHosts = (options.allowedHosts ?? DEFAULT_ALLOWED_HOSTS).map((h) => h.toLowerCase());
  }

  inspect(tool: string, params: JsonValue): InspectionResult {
    const key = TOOL_PARAM[tool];
    if (key === undefined || typeof params !== "object" || params === null || Array.isArray(params)) return ALLOW;
    const text = getOwn(params, key);
    if (typeof text !== "string") return ALLOW;
    // A fetch tool handed a whole command line (whitespace inside) is judged as one.
    const findings = key === "url" && !/\s/.test(text.trim()) ? this.fetchFindings(text.trim()) : this.commandFindings(text);
    return summarise(findings);
  }

  /** A URL a fetch tool will request. */
  fetchFindings(url: string): Finding[] {
    return this.unlistedHosts([url]).map((host) => ({ deny: false, reason: `fetches from unlisted host ${host}` }));
  }

  commandFindings(command: string): Finding[] {
    const findings: Finding[] = [];
    const { pipelines, truncated } = pipelinesOf(command);
    if (truncated) findings.push({ deny: true, reason: "the command nests substitutions too deeply to inspect" });
    const all = pipelines.flat(2);
    let reachesOut = false;
    /** Unlisted hosts plain downloads fetch from, reported last: worth a look, not a refusal. */
    const fetchedFrom: string[] = [];
    for (const inv of all) {
      if (NETWORK_CLIENTS.has(inv.program)) {
        findings.push({ deny: true, reason: `runs the raw network client '${inv.program}' as a command` });
        reachesOut = true;
      }
      for (const r of inv.redirects) {
        const socket = RAW_SOCKETS.find((s) => r.target.text.includes(s));
        if (socket) {
          findings.push({ deny: true, reason: `redirects to a raw network socket ('${socket}')` });
          reachesOut = true;
        }
      }
      if (!DOWNLOADERS.has(inv.program)) continue;
      const use = networkUse(inv);
      const unlisted = this.unlistedHosts(use.urls);
      if (unlisted.length > 0) reachesOut = true;
      fetchedFrom.push(...unlisted);
      if (use.upload !== undefined && (unlisted.length > 0 || use.urls.length === 0)) {
        findings.push({ deny: true, reason: `uploads to ${hostPhrase(unlisted)} ('${use.upload}')` });
      }
    }
    for (const stages of pipelines) findings.push(...this.pipedIntoShell(stages));
    for (const inv of all) if (SHELLS.has(inv.program) || inv.program === "eval") findings.push(...this.substitutedIntoShell(inv));
    const decoder = all.find(isBase64Decode);
    if (decoder && (reachesOut || pipelines.some((stages) => feedsShell(stages)))) {
      findings.push({ deny: true, reason: "decodes a payload ('base64 -d') in a command line that also reaches the network or a shell" });
    }
    for (const host of fetchedFrom) findings.push({ deny: false, reason: `fetches from unlisted host ${host}` });
    return findings;
  }

  /** `download | sh`: denied from an unlisted host, a warning from an allowlisted one. */
  pipedIntoShell(stages: Invocation[][]): Finding[] {
    const findings: Finding[] = [];
    for (let j = 1; j < stages.length; j++) {
      const runner = (stages[j] as Invocation[]).find(runsStdin);
      if (runner === undefined) continue;
      const pattern = `'| ${runner.program}'`;
      for (const inv of stages.slice(0, j).flat()) {
        if (!DOWNLOADERS.has(inv.program)) continue;
        const urls = networkUse(inv).urls;
        const unlisted = this.unlistedHosts(urls);
        if (unlisted.length > 0 || urls.length === 0) {
          findings.push({ deny: true, reason: `pipes a download from ${hostPhrase(unlisted)} into a shell (${pattern})` });
        } else {
          const hosts = [...new Set(urls.flatMap(urlHosts))].join(", ");
          findings.push({ deny: false, reason: `pipes a download from allowlisted host ${hosts} into a shell (${pattern}); the script runs unreviewed` });
        }
      }
      for (const inv of stages.slice(0, j).flat()) {
        if (isBase64Decode(inv)) {
          findings.push({ deny: true, reason: `pipes a decoded payload ('base64 -d') into a shell (${pattern})` });
        }
      }
    }
    return findings;
  }

  /** `sh -c "$(curl …)"`, `bash <(curl …)`: a download a shell runs, judged like a pipe into it. */
  substitutedIntoShell(shell: Invocation): Finding[] {
    const findings: Finding[] = [];
    const pattern = `'${shell.program} $(download)'`;
    for (const word of shell.args) {
      for (const inv of word.substitutions.flatMap(scriptInvocations)) {
        if (!DOWNLOADERS.has(inv.program)) continue;
        const urls = networkUse(inv).urls;
        const unlisted = this.unlistedHosts(urls);
        findings.push(
          unlisted.length > 0 || urls.length === 0
            ? { deny: true, reason: `runs a download from ${hostPhrase(unlisted)} in a shell (${pattern})` }
            : { deny: false, reason: `runs a download from allowlisted host ${urls.flatMap(urlHosts).join(", ")} in a shell (${pattern})` },
        );
      }
    }
    return findings;
  }

  /** Hosts among `urls` that are neither loopback nor allowlisted. */
  unlistedHosts(urls: readonly string[]): string[] {
    const out = new Set<string>();
    for (const url of urls) {
      for (const host of urlHosts(url)) {
        if (!isLoopback(host) && !isAllowlisted(host, this.allowedHosts)) out.add(host);
      }
    }
    return [...out];
  }
}

function runsStdin(inv: Invocation): boolean {
  return (SHELLS.has(inv.program) || INTERPRETERS.has(inv.program)) && readsScriptFromStdin(inv);
}

function feedsShell(stages: Invocation[][]): boolean {
  return stages.slice(1).some((stage) => stage.some(runsStdin));
}

function isBase64Decode(inv: Invocation): boolean {
  return inv.program === "base64" && inv.args.some((w) => w.text === "--decode" || /^-[a-zA-Z]*[dD]/.test(w.text));
}

function hostPhrase(hosts: string[]): string {
  return hosts.length > 0 ? `unlisted host ${hosts.join(", ")}` : "a host that cannot be determined";
}

function summarise(findings: Finding[]): InspectionResult {
  const denies = unique(findings.filter((f) => f.deny).map((f) => f.reason));
  if (denies.length > 0) return { verdict: "deny", reason: denies.join("; ") };
  const warns = unique(findings.map((f) => f.reason));
  return warns.length > 0 ? { verdict: "warn", reason: warns.join("; ") } : ALLOW;
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
