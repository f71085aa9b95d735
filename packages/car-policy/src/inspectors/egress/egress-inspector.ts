/**
 * The egress guard: refuses shell commands and fetches shaped like data
 * leaving the machine or code arriving to run, judged on what a shell would
 * actually execute (see `command-position.ts`), never on substrings.
 *
 * Denied: a raw network client (`nc`, `socat`, `openssl s_client`, …) run as
 * a command; a redirection to `/dev/tcp/`; a download from an unlisted or
 * undeterminable host reaching an interpreter — piped (`| sh`, `| python3`),
 * through process substitution (`source <(…)`, `> >(sh)`), a here-string or
 * `sh -c "$(…)"`; an upload to such a host, or through an option that
 * reroutes the request (`--connect-to`, `-x`, `-K`); a decoded payload
 * (`base64 -d`, `xxd -r`, …) fed to an interpreter, or `base64 -d` in a line
 * that also reaches the network. Fail closed on opacity: a program name,
 * script or redirection the reader cannot resolve statically is denied when
 * the command also carries a network or execution signal. Warned: a
 * download from an allowlisted host piped into a shell (the installers
 * people really run), and a fetch from an unlisted host. Loopback is not
 * egress. Every pass is linear in the command's length; a command longer
 * than `MAX_COMMAND_LENGTH` is denied unread.
 */
import { getOwn, type JsonValue } from "@car/ir";
import { ALLOW, type InspectionResult, type Inspector } from "../inspector.ts";
import { clip, commandInvocations, type Invocation, pipelinesOf, scriptInvocations, scriptSource } from "./command-position.ts";
import { isAllowlisted, isLoopback, UNKNOWN_HOST, urlHosts } from "./hosts.ts";
import { networkUse } from "./network-clients.ts";
import { DECODERS, DOWNLOADERS, INTERPRETERS, NETWORK_TOOLS, RAW_NETWORK_CLIENTS, RAW_NETWORK_SUBCOMMANDS, SHELLS } from "./program-tables.ts";
import type { Word } from "./shell-syntax.ts";

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

/**
 * The longest command the guard reads: 128 KiB, Linux's limit on one
 * argument (`MAX_ARG_STRLEN`), so no `bash -c` a host runs can be longer.
 * Anything longer is denied without being read.
 */
export const MAX_COMMAND_LENGTH = 131_072;

const RAW_SOCKETS = ["/dev/tcp/", "/dev/udp/"];
/** Decoders whose presence in a command line that reaches the network is itself denied (the seed's `base64 -d` rule). */
const STRONG_DECODERS = new Set(["base64", "base32", "basenc", "base58", "xxd", "openssl", "uudecode"]);
/** Reasons listed in one result at most; the rest are counted. */
const MAX_REASONS = 12;

/** Which parameter carries the text for each CAR tool the guard reads. */
const TOOL_PARAM: Record<string, "command" | "url"> = { shell: "command", webfetch: "url", http: "url" };

export interface EgressOptions {
  /** Replaces the default allowlist. */
  allowedHosts?: readonly string[];
}

export interface Finding {
  deny: boolean;
  reason: string;
}

/** How a program's output reaches an interpreter, as a reason names it (`'| sh'`, `'source <(download)'`). */
type Route = (runner: string) => string;

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
    return this.unlistedHosts([url]).map((host) => ({ deny: false, reason: `fetches from ${hostPhrase([host])}` }));
  }

  commandFindings(command: string): Finding[] {
    if (command.length > MAX_COMMAND_LENGTH) {
      return [
        { deny: true, reason: `the command is ${command.length} characters long, over the ${MAX_COMMAND_LENGTH} the guard reads, so it is denied unread` },
      ];
    }
    return this.parsedCommandFindings(command, pipelinesOf(command));
  }

  /** `commandFindings` over a command already read with `pipelinesOf`, so a caller that has the parse does not read it twice. */
  parsedCommandFindings(command: string, parsed: ReturnType<typeof pipelinesOf>): Finding[] {
    const findings: Finding[] = [];
    const { pipelines, truncated, incomplete } = parsed;
    if (truncated) findings.push({ deny: true, reason: "the command nests substitutions too deeply to inspect" });
    const all = pipelines.flat(2);
    /** What the reader could not resolve statically; denied only alongside a network or execution signal. */
    const opaque: string[] = [];
    // Text that does not parse is read by guesswork: with a network or execution signal, that is opacity too.
    if (incomplete !== undefined) opaque.push(`the command, which does not parse (${incomplete})`);
    let reachesOut = false;
    /** Unlisted hosts plain downloads fetch from, reported last: worth a look, not a refusal. */
    const fetchedFrom: string[] = [];
    for (const inv of all) {
      const raw = rawClient(inv);
      if (raw !== undefined) {
        findings.push({ deny: true, reason: `runs the raw network client '${raw}' as a command` });
        reachesOut = true;
      }
      if (inv.opaque !== undefined) opaque.push(inv.opaque);
      for (const r of inv.redirects) {
        const socket = RAW_SOCKETS.find((s) => r.target.text.includes(s));
        if (socket) {
          findings.push({ deny: true, reason: `redirects to a raw network socket ('${socket}')` });
          reachesOut = true;
        } else if (r.target.opaque !== undefined && r.heredoc === undefined) {
          const what = `the redirection target '${clip(r.target.text)}' (${r.target.opaque})`;
          if (r.target.text.startsWith("/dev/")) findings.push({ deny: true, reason: `cannot resolve ${what}, which may be a raw network socket` });
          else opaque.push(what);
        }
      }
      if (!DOWNLOADERS.has(inv.program)) continue;
      const use = networkUse(inv);
      const unlisted = this.unlistedHosts(use.routed !== undefined ? [...use.urls, UNKNOWN_HOST] : use.urls);
      if (unlisted.length > 0) reachesOut = true;
      for (const host of unlisted) fetchedFrom.push(host);
      if (use.upload !== undefined && (unlisted.length > 0 || use.urls.length === 0)) {
        findings.push({ deny: true, reason: `uploads to ${hostPhrase(unlisted)} ('${use.upload}')${routedPhrase(use.routed)}` });
      }
    }
    let executes = false;
    for (const stages of pipelines) if (this.interpreterFindings(stages, findings, opaque)) executes = true;
    const decoder = all.find((inv) => STRONG_DECODERS.has(inv.program) && decoderName(inv) !== undefined);
    if (decoder && (reachesOut || executes)) {
      findings.push({ deny: true, reason: `decodes a payload ('${decoderName(decoder)}') in a command line that also reaches the network or a shell` });
    }
    if (opaque.length > 0) {
      const signal = executes ? "it feeds an interpreter" : networkSignal(command, all);
      if (signal !== undefined) {
        findings.push({ deny: true, reason: `cannot resolve ${unique(opaque).slice(0, 3).join(", ")} statically, and ${signal}` });
      }
    }
    for (const host of fetchedFrom) findings.push({ deny: false, reason: `fetches from ${hostPhrase([host])}` });
    return findings;
  }

  /**
   * Everything in one pipeline that reaches an interpreter as its program:
   * earlier stages piped to one reading standard input, a process
   * substitution, a here-string or a redirection feeding one, a substitution
   * given as its script. Returns whether anything feeds an interpreter from
   * another program. Linear: each earlier stage is judged once per runner name.
   */
  interpreterFindings(stages: Invocation[][], findings: Finding[], opaque: string[]): boolean {
    let executes = false;
    const upstream: Invocation[] = [];
    const judgedUpTo = new Map<string, number>();
    // Feeding an interpreter is an execution signal when what feeds it is itself worth a finding.
    const judge = (p: Invocation, runner: string, route: Route) => {
      for (const f of this.producerFindings(p, runner, route)) {
        findings.push(f);
        executes = true;
      }
    };
    const feed = (producers: readonly Invocation[], runner: string, route: Route) => {
      for (const p of producers) judge(p, runner, route);
    };
    for (let j = 0; j < stages.length; j++) {
      const stage = stages[j] as Invocation[];
      for (const inv of stage) {
        const source = scriptSource(inv);
        if (source === undefined) continue;
        const runner = inv.program;
        if (source.kind === "stdin") {
          const redirected = stdinProducers(inv);
          if (redirected !== undefined) {
            if (redirected.opaque !== undefined) opaque.push(redirected.opaque);
            feed(redirected.producers, runner, redirected.route);
          } else if (j > 0) {
            const from = judgedUpTo.get(runner) ?? 0;
            feed(upstream.slice(from), runner, (r) => `'| ${r}'`);
            judgedUpTo.set(runner, upstream.length);
          }
        } else {
          const word = source.word;
          const substituted = word.substitutions.flatMap((s) => scriptInvocations(s));
          const route: Route = source.kind === "inline" ? (r) => `'${r} $(download)'` : (r) => `'${r} <(download)'`;
          if (substituted.length > 0) feed(substituted, runner, route);
          // A script file named through a variable is no less visible than one named literally; a script string built at run time is.
          else if (source.kind === "inline" && word.opaque !== undefined) opaque.push(`the script '${clip(word.text)}' given to '${runner}' (${word.opaque})`);
        }
      }
      for (const inv of stage) upstream.push(inv);
      // `cmd > >(sh)`, `tee >(sh)`: whatever this pipeline has produced so far is the program of the shell inside.
      for (const inv of stage) {
        for (const word of [...inv.args, ...inv.redirects.map((r) => r.target)]) {
          if (!word.text.startsWith(">(")) continue;
          for (const script of word.substitutions) {
            const first = script.pipelines[0]?.stages[0];
            for (const runner of first?.kind === "simple" ? commandInvocations(first) : []) {
              if (scriptSource(runner)?.kind !== "stdin") continue;
              const key = `>(${runner.program})`;
              feed(upstream.slice(judgedUpTo.get(key) ?? 0), runner.program, (r) => `'>(${r})'`);
              judgedUpTo.set(key, upstream.length);
            }
          }
        }
      }
    }
    return executes;
  }

  /** What one program feeding an interpreter amounts to. */
  producerFindings(p: Invocation, runner: string, route: Route): Finding[] {
    const pattern = route(runner);
    if (DOWNLOADERS.has(p.program)) {
      const use = networkUse(p);
      const unlisted = this.unlistedHosts(use.routed !== undefined ? [...use.urls, UNKNOWN_HOST] : use.urls);
      if (unlisted.length > 0 || use.urls.length === 0) {
        return [{ deny: true, reason: `pipes a download from ${hostPhrase(unlisted)} into a shell (${pattern})${routedPhrase(use.routed)}` }];
      }
      const hosts = [...new Set(use.urls.flatMap(urlHosts))].join(", ");
      return [{ deny: false, reason: `pipes a download from allowlisted host ${hosts} into a shell (${pattern}); the script runs unreviewed` }];
    }
    const decoded = decoderName(p);
    if (decoded !== undefined) return [{ deny: true, reason: `pipes a decoded payload ('${decoded}') into a shell (${pattern})` }];
    if (p.opaque !== undefined) return [{ deny: true, reason: `feeds a shell (${pattern}) from ${p.opaque}, which cannot be resolved statically` }];
    const raw = rawClient(p);
    if (raw !== undefined || NETWORK_TOOLS.has(p.program)) {
      return [{ deny: true, reason: `pipes what '${raw ?? p.program}' receives from the network into a shell (${pattern})` }];
    }
    if (p.program === "echo" || p.program === "printf") {
      if (p.args.some((w) => w.opaque !== undefined)) {
        return [{ deny: true, reason: `feeds a shell (${pattern}) a script built at run time by '${p.program}', which cannot be resolved statically` }];
      }
      // `printf '\x6e\x63 …'`, `echo -e '\156…'`: escapes decoded on the way in are a payload the reader never saw.
      const escapes = p.program === "printf" || p.args.some((w) => /^-[a-zA-Z]*e[a-zA-Z]*$/.test(w.text));
      if (escapes && p.args.some((w) => /\\(x[0-9a-fA-F]|[0-7]{1,3}|u[0-9a-fA-F])/.test(w.text))) {
        return [{ deny: true, reason: `pipes a decoded payload ('${p.program}' escapes) into a shell (${pattern})` }];
      }
    }
    return [];
  }

  /** Hosts among `urls` that are neither loopback nor allowlisted (`UNKNOWN_HOST` never is). */
  unlistedHosts(urls: readonly string[]): string[] {
    const out = new Set<string>();
    for (const url of urls) {
      for (const host of url === UNKNOWN_HOST ? [UNKNOWN_HOST] : urlHosts(url)) {
        if (host === UNKNOWN_HOST || (!isLoopback(host) && !isAllowlisted(host, this.allowedHosts))) out.add(host);
      }
    }
    return [...out];
  }
}

/** The programs feeding an interpreter's standard input through a redirection, when one does. */
function stdinProducers(inv: Invocation): { producers: Invocation[]; route: Route; opaque?: string } | undefined {
  for (const r of inv.redirects) {
    if (r.op === "<" || r.op === "<>") {
      const producers = r.target.substitutions.flatMap((s) => scriptInvocations(s));
      return { producers, route: (runner) => `'${runner} < <(download)'` };
    }
    if (r.op === "<<<") {
      const producers = r.target.substitutions.flatMap((s) => scriptInvocations(s));
      const opaque = producers.length === 0 && r.target.opaque !== undefined ? `the here-string given to '${inv.program}' (${r.target.opaque})` : undefined;
      return { producers, route: (runner) => `'${runner} <<< $(download)'`, ...(opaque !== undefined ? { opaque } : {}) };
    }
    if (r.heredoc !== undefined) return { producers: [], route: (runner) => `'${runner} <<EOF'` };
  }
  return undefined;
}

/** The raw network client an invocation is (`nc`, `openssl s_client`), if it is one. */
function rawClient(inv: Invocation): string | undefined {
  if (RAW_NETWORK_CLIENTS.has(inv.program)) return inv.program;
  const sub = inv.args[0]?.text;
  return sub !== undefined && RAW_NETWORK_SUBCOMMANDS[inv.program]?.includes(sub) ? `${inv.program} ${sub}` : undefined;
}

/** How a decoder invocation decodes (`base64 -d`, `xxd -r`), or `undefined` when it does not. */
function decoderName(inv: Invocation): string | undefined {
  const spec = DECODERS[inv.program];
  if (spec === undefined) return undefined;
  if (spec.always) return inv.program;
  if (spec.subcommands !== undefined && !spec.subcommands.includes(inv.args[0]?.text ?? "")) return undefined;
  const flag = inv.args.find((w: Word) => spec.flags?.test(w.text));
  return flag === undefined ? undefined : `${inv.program}${spec.subcommands ? ` ${inv.args[0]?.text}` : ""} ${flag.text}`;
}

const URL_SIGNAL = /[a-zA-Z][a-zA-Z0-9+.-]*:[/\\]/;
const IP_SIGNAL = /(^|[^\w.])(\d{1,3}(\.\d{1,3}){3}|0x[0-9a-fA-F]{1,8}|\[?[0-9a-fA-F]*::[0-9a-fA-F:.]*\]?)($|[^\w.])/;
const HOST_SIGNAL =
  /(^|[^\w.-])[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*\.(com|net|org|io|dev|app|ai|co|xyz|info|biz|ru|cn|tk|top|onion|example|site|online|cc|ly|gg|me|us|uk|de|fr|cloud|tech|pw|su)($|[^\w.-])/i;
const HOST_PORT_SIGNAL = /(^|[\s'"=@])[a-zA-Z0-9][a-zA-Z0-9.-]*[:\s]\d{2,5}($|[\s'"/;|&)])/;
const SOCKET_SIGNAL = /\/dev\/(tcp|udp)|\/dev\/[^\s]*[*?[]/;
const CLIENT_NAMES = [...RAW_NETWORK_CLIENTS, ...DOWNLOADERS].sort((a, b) => b.length - a.length).join("|");
const CLIENT_SIGNAL = new RegExp(`(^|[\\s;|&(\`'"{,/\\\\=])(${CLIENT_NAMES})($|[\\s;|&)\`'",}])`, "i");
const RUNNER_NAMES = [...SHELLS, ...Object.keys(INTERPRETERS)].join("|");
/** Text that pipes into, or hands a script to, an interpreter: `| sh`, `| python3`, `bash -c`, a decoder. */
const EXEC_SIGNAL = new RegExp(
  `\\|\\s*(sudo\\s+)?(${RUNNER_NAMES})[0-9.]*($|[\\s;|&)'"\`])|(^|[\\s;|&(\`'"])((${RUNNER_NAMES})\\s+-[a-z]*c)\\s|(base64|base32|basenc|xxd|uudecode)\\s+-`,
  "i",
);

/**
 * A network or execution signal in the command, named for the reason:
 * programs that reach the network or decode, then URL-, IP-, host- and
 * socket-shaped text and the names of network clients anywhere in it.
 */
export function networkSignal(command: string, all: readonly Invocation[]): string | undefined {
  const program = all.find(
    (inv) => rawClient(inv) !== undefined || DOWNLOADERS.has(inv.program) || NETWORK_TOOLS.has(inv.program) || decoderName(inv) !== undefined,
  );
  if (program !== undefined) return `it also runs '${program.program}'`;
  const checks: [RegExp, string][] = [
    [SOCKET_SIGNAL, "a raw socket path"],
    [URL_SIGNAL, "a URL"],
    [IP_SIGNAL, "an IP address"],
    [HOST_SIGNAL, "a host name"],
    [CLIENT_SIGNAL, "the name of a network client"],
    [EXEC_SIGNAL, "a pipe or script handed to an interpreter"],
    [HOST_PORT_SIGNAL, "a host and port"],
  ];
  for (const [pattern, what] of checks) if (pattern.test(command)) return `the command also carries ${what}`;
  return undefined;
}

function hostPhrase(hosts: string[]): string {
  if (hosts.length === 0) return "a host that cannot be determined";
  const named = hosts.filter((h) => h !== UNKNOWN_HOST);
  const unknown = named.length < hosts.length ? [UNKNOWN_HOST] : [];
  return named.length > 0 ? `unlisted host ${[...named, ...unknown].join(", ")}` : UNKNOWN_HOST;
}

function routedPhrase(routed: string | undefined): string {
  return routed === undefined ? "" : `; '${routed}' reroutes the request, so its real destination is unknown`;
}

function summarise(findings: Finding[]): InspectionResult {
  const denies = unique(findings.filter((f) => f.deny).map((f) => f.reason));
  if (denies.length > 0) return { verdict: "deny", reason: joinReasons(denies) };
  const warns = unique(findings.map((f) => f.reason));
  return warns.length > 0 ? { verdict: "warn", reason: joinReasons(warns) } : ALLOW;
}

function joinReasons(reasons: string[]): string {
  const shown = reasons.slice(0, MAX_REASONS).join("; ");
  return reasons.length > MAX_REASONS ? `${shown}; and ${reasons.length - MAX_REASONS} more` : shown;
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
