/**
 * Why a shell command is not proven safe. The gate does not look for attacks
 * here; it looks for a proof, and reports every place the proof fails.
 *
 * A command is **proven safe** when every program it runs in command
 * position — at every nesting level, through wrappers, substitutions,
 * `sh -c` and here-documents fed to a shell — is known (`known-programs.ts`),
 * is given no option or subcommand that runs text or sends a file, and
 * nothing in it is opaque: no text reaching a shell or interpreter from a
 * pipe, here-string, file, FIFO or variable; no interpreter code given on
 * the command line (`python -c`); no shell feature that runs text later
 * (`trap`, `alias` bodies, `${x@P}`, arithmetic array subscripts,
 * `PROMPT_COMMAND=`, `declare -n`, `eval` of built text); no decoder feeding
 * anything; no network client carrying a command substitution or file
 * content. A script named by its path (`./gradlew`, `bash scripts/test.sh`)
 * counts as known: what a file does when it runs is beyond any reader, and
 * only a sandbox stops it.
 *
 * An empty list is the proof. Every reason names what could not be proven,
 * so the person asked can judge it.
 */
import { type Invocation, invocationOf, pipelinesOf, scriptSource } from "../inspectors/egress/command-position.ts";
import { MAX_COMMAND_LENGTH } from "../inspectors/egress/egress-inspector.ts";
import { DOWNLOADERS, INTERPRETERS, NETWORK_TOOLS, programFamily, RAW_NETWORK_CLIENTS, SHELLS, SOURCE_BUILTINS } from "../inspectors/egress/program-tables.ts";
import type { Word } from "../inspectors/egress/shell-syntax.ts";
import { clip } from "../inspectors/egress/command-position.ts";
import { DECODING_MODULES, DECODING_PROGRAMS, EXECUTING_VARIABLES, type KnownProgram, knownProgram, SAFE_GIT_CONFIG_KEYS } from "./known-programs.ts";

/** Reasons listed at most; a command that fails the proof this often is not worth reading further. */
const MAX_REASONS = 8;

/** Programs that read commands from standard input when it is not a terminal (`psql <<SQL`, `sqlite3 < x.sql`). */
const STDIN_COMMAND_PROGRAMS = new Set(["sqlite3", "psql", "mysql", "mongosh", "redis-cli", "gdb", "lldb", "ed", "ftp", "sftp", "bc", "dc"]);
/** Programs that copy files to another host. */
const COPIERS = new Set(["scp", "rsync", "sftp", "rclone"]);
/** Paths that hold credentials by convention. */
const SECRET_PATH =
  /(^|\/)(\.env(\.[\w-]+)?|\.ssh|id_[a-z0-9]+|\.aws|\.netrc|\.npmrc|\.pypirc|\.git-credentials|credentials(\.json)?|\.kube|\.gnupg|[^/]*\.(pem|key|p12|pfx))(\/|$)/;
/** Wrappers that hand a program words read from their input. */
const ARGUMENT_FEEDERS = new Set(["xargs", "parallel"]);
/** Variables whose value is a program to run: a plain known program is fine (`GIT_PAGER=cat`). */
const PROGRAM_VARIABLES =
  /^(GIT_SSH|GIT_SSH_COMMAND|GIT_PAGER|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_EXTERNAL_DIFF|EDITOR|VISUAL|PAGER|MANPAGER|RSYNC_RSH|CVS_RSH)$/;
/** `ssh -o` keys that run a command or read more configuration. */
const SSH_RUNNING_KEYS = /^(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand|Include|RemoteCommand|Match|ProxyUseFdpass)\b/i;
/** `apt-get -o` keys that run a command. */
const APT_RUNNING_KEYS = /invoke|hook|command|program|script|dpkg::(pre|post)|exec/i;

/** Reasons the command is not proven safe; empty when it is. */
export function unprovenReasons(command: string): string[] {
  if (command.length > MAX_COMMAND_LENGTH) return [`the command is longer than the ${MAX_COMMAND_LENGTH} characters the reader reads`];
  const reasons = new Set<string>();
  const add = (reason: string) => {
    if (reasons.size < MAX_REASONS) reasons.add(reason);
  };
  const { pipelines, truncated, incomplete } = pipelinesOf(command);
  if (truncated) add("the command nests deeper than the reader follows");
  if (incomplete !== undefined) add(`the command does not parse (${incomplete})`);
  for (const reason of deferredTextReasons(command)) add(reason);
  const substituted = /\$\(|`|[<>]\(/.test(command);
  if (/(^|[\s;&|(])coproc\s/.test(command)) add("'coproc' starts a program whose input the rest of the command writes");
  for (const reason of writtenThenRun(pipelines.flat(2))) add(reason);
  for (const stages of pipelines) {
    stages.forEach((stage, j) => {
      for (const inv of stage) for (const reason of invocationReasons(inv, j, stages.length, substituted)) add(reason);
    });
  }
  return [...reasons];
}

/** Shell features, found in the text itself, that run text later or build a program from text. */
function deferredTextReasons(command: string): string[] {
  const out: string[] = [];
  // Each pattern is tried only when the text holds its anchor: the hook runs this once per process, cold, and compiling them all costs milliseconds.
  if (command.includes("=")) {
    for (const m of command.matchAll(
      /(?:^|[\s;&|(`{'"])(?:export\s+|declare\s+(?:-\w+\s+)*|typeset\s+(?:-\w+\s+)*|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*(?:%%)?)\+?=('[^']*'|"[^"]*"|[^\s;&|)]*)/g,
    )) {
      const name = m[1] as string;
      if (!EXECUTING_VARIABLES.test(name)) continue;
      const value = (m[2] as string).replace(/^['"]|['"]$/g, "");
      if (PROGRAM_VARIABLES.test(name) && /^[\w./-]*$/.test(value) && isPlainProgram(programFamily(value.replace(/^.*\//, "")))) continue;
      out.push(`it sets '${name}', which makes a later program run or load text`);
    }
  }
  if (command.includes("@P")) {
    if (/\$\{[^}]*@P\}/.test(command)) out.push("a '${…@P}' expansion runs the prompt's command substitutions");
  }
  if (command.includes("[")) {
    if (/\(\([^()]*\[[^\]]*[$`]/.test(command) || /\blet\s[^;|&\n]*\[[^\]]*[$`]/.test(command))
      out.push("an arithmetic array subscript is evaluated, and can run a command substitution");
    if (/\b(read|unset|declare|typeset|local|export|readonly|mapfile|readarray|printf\s+-v|test\s+-v|\[\[\s+-v)\b[^;|&\n]*\w\[[^\]]*[$`]/.test(command))
      out.push("a variable name with an array subscript is evaluated, and can run a command substitution");
  }
  if (command.includes("case") && /(^|[\s;&|(])case\s/.test(command)) out.push("a 'case' statement, whose patterns the reader does not separate from commands");
  if (/declare|typeset|local/.test(command) && /\b(declare|typeset|local)\s+(-\w+\s+)*-\w*n/.test(command))
    out.push("'declare -n' makes a name refer to another, chosen at run time");
  if (command.includes("alias") && /\bshopt\s+-s\s+[^;|&\n]*expand_aliases|\bsetopt\s+[^;|&\n]*aliases/.test(command))
    out.push("it turns on alias expansion, so a later word can run an alias body");
  return out;
}

/** A known program with nothing in its row that runs text or talks to the network. */
function isPlainProgram(name: string): boolean {
  const row = knownProgram(name);
  return row !== undefined && row.runs === undefined && row.runsSubcommands === undefined && row.network === undefined && !isRunner(name);
}

function isRunner(name: string): boolean {
  return SHELLS.has(name) || Object.hasOwn(INTERPRETERS, name) || name === "eval" || SOURCE_BUILTINS.has(name);
}

/** What stops one invocation from being proven, at stage `j` of a pipeline of `stages`. */
function invocationReasons(inv: Invocation, j: number, stages: number, substituted: boolean): string[] {
  const name = inv.program;
  // `[ -f x ]` is `test`, not a glob; `( cd x && … )` after a reserved word reaches here as a word `(`.
  if (inv.named === "[" || name === "[") return [];
  if (name === "(") {
    const inner = invocationOf({ kind: "simple", words: inv.args, redirects: inv.redirects });
    return inner === undefined ? [] : invocationReasons(inner, j, stages, substituted);
  }
  if (inv.opaque !== undefined) return [`${inv.opaque} is decided at run time`];
  const out: string[] = [];
  const fed = inv.wrappers?.find((w) => ARGUMENT_FEEDERS.has(w));
  const piped = j > 0;
  const stdinRedirect = inv.redirects.find((r) => r.op === "<" || r.op === "<>" || r.op === "<&" || r.op === "<<<" || r.heredoc !== undefined);

  if (decodes(inv) && (j < stages - 1 || substituted)) out.push(`'${name}' decodes a payload the reader never sees, and its output feeds another program`);

  if (name === "awk") return [...out, ...awkReasons(inv, fed)];
  if (isRunner(name)) return [...out, ...runnerReasons(inv, piped, fed, stdinRedirect)];
  if (name === "sed") return [...out, ...sedReasons(inv)];

  const row = knownProgram(name);
  if (row === undefined) {
    if (RAW_NETWORK_CLIENTS.has(name)) return [...out, `'${name}' is a raw network client`];
    // A script named by its path runs the project's own file, like `bash scripts/x.sh`.
    if (inv.named?.includes("/") && !/[$`*?[{]/.test(inv.named.slice(inv.named.lastIndexOf("/") + 1))) return out;
    return [...out, `'${name}' is not a program the gate knows`];
  }
  out.push(...optionReasons(name, row, inv));
  if (fed !== undefined && row.runsOperands === undefined && (row.runs !== undefined || row.network !== undefined || row.runsSubcommands !== undefined))
    out.push(`'${fed}' hands '${name}' words read from its input, and '${name}' has options that run or send text`);
  if (STDIN_COMMAND_PROGRAMS.has(name) && (piped || stdinRedirect !== undefined))
    out.push(`'${name}' reads commands from its standard input, which the reader does not prove`);
  if (isNetworkUse(name, row, inv)) out.push(...networkReasons(inv, piped, stdinRedirect !== undefined));
  if (name === "alias") {
    for (const w of inv.args) {
      const eq = w.text.indexOf("=");
      if (eq > 0 && (w.opaque !== undefined || unprovenReasons(w.text.slice(eq + 1)).length > 0))
        out.push(`the alias '${clip(w.text.slice(0, eq))}' has a body that is not proven safe`);
    }
  }
  const inner = operandProgram(name, row, inv);
  if (inner !== undefined) out.push(...invocationReasons(inner, j, stages, substituted));
  return out;
}

/** `printf … > x.sh; bash x.sh`: a file the command writes and then runs is text reaching a shell, like a pipe. */
function writtenThenRun(all: readonly Invocation[]): string[] {
  const written = new Set<string>();
  const plain = (path: string) => path.replace(/^(\.\/)+/, "");
  for (const inv of all) {
    for (const r of inv.redirects) if (/^(>|>>|>\||&>|&>>|<>)$/.test(r.op)) written.add(plain(r.target.text));
    if (inv.program === "tee") for (const w of inv.args) if (!w.text.startsWith("-")) written.add(plain(w.text));
  }
  if (written.size === 0) return [];
  const out: string[] = [];
  for (const inv of all) {
    const ran = isRunner(inv.program) ? scriptSource(inv) : undefined;
    const file = ran?.kind === "file" ? ran.word.text : inv.named;
    if (file !== undefined && written.has(plain(file))) out.push(`it writes '${clip(file, 24)}' and then runs it`);
  }
  return out;
}

/** Shells, interpreters, `eval` and `source`: where their program comes from. */
function runnerReasons(inv: Invocation, piped: boolean, fed: string | undefined, stdinRedirect: Invocation["redirects"][number] | undefined): string[] {
  const name = inv.program;
  const shell = SHELLS.has(name) || name === "eval" || SOURCE_BUILTINS.has(name);
  if (fed !== undefined) return [`'${fed}' hands '${name}' text read from its input`];
  if (piped) return [`text reaches '${name}' from a pipe`];
  const source = scriptSource(inv);
  if (source === undefined) {
    if (name !== "eval" && inv.args.some((w) => /^-[a-zA-Z]*c$/.test(w.text))) return [`'${name} -c' takes its script from where the reader cannot see`];
    return [];
  }
  if (source.kind === "inline") {
    if (!shell) return [`'${name}' runs code given on its command line`];
    if (source.word.opaque !== undefined) return [`the script given to '${name}' is built at run time (${source.word.opaque})`];
    return [];
  }
  if (source.kind === "file") {
    const word = source.word;
    if (name === "python" && DECODING_MODULES.has(word.text)) return [];
    if (word.substitutions.length > 0 || /^[<>]\(|^\/dev\/(fd|tcp|udp)\/|^\/proc\//.test(word.text))
      return [`'${name}' runs a script produced at run time ('${clip(word.text)}')`];
    if (inv.wrappers?.includes("find") && word.text.includes("{}")) return [`'find' hands '${name}' the files it finds to run`];
    return [];
  }
  // Standard input is the program.
  if (stdinRedirect === undefined) return [];
  if (stdinRedirect.heredoc !== undefined) {
    if (!shell) return [`'${name}' runs code from a here-document the reader does not prove`];
    if (!stdinRedirect.quoted && /[$`]/.test(stdinRedirect.heredoc)) return [`the here-document fed to '${name}' is expanded before it runs`];
    return [];
  }
  if (stdinRedirect.op === "<<<") {
    if (shell && stdinRedirect.target.opaque === undefined) return [];
    return [`text reaches '${name}' from a here-string`];
  }
  return [`'${name}' runs its standard input, read from '${clip(stdinRedirect.target.text)}' (a file or FIFO the reader does not see)`];
}

/** `awk`: its program is the first operand; `system()`, pipes and `getline` run commands. */
function awkReasons(inv: Invocation, fed: string | undefined): string[] {
  if (fed !== undefined) return [`'${fed}' hands 'awk' words read from its input`];
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const t = (args[i] as Word).text;
    if (t === "--") {
      return awkProgramReasons(args[i + 1]);
    }
    if (/^-[Fv]$/.test(t)) i++;
    else if (/^-(f|-file)$/.test(t) || t === "-E" || t === "--exec") return [];
    else if (t === "-e" || t === "--source") return awkProgramReasons(args[i + 1]);
    else if (t.startsWith("-") && t.length > 1) continue;
    else return awkProgramReasons(args[i]);
  }
  return [];
}

function awkProgramReasons(program: Word | undefined): string[] {
  if (program === undefined) return [];
  if (program.opaque !== undefined) return [`the awk program is built at run time (${program.opaque})`];
  if (/\bsystem\s*\(|\|/.test(program.text) || /@load/.test(program.text))
    return [`the awk program '${clip(program.text)}' runs commands (system(), a pipe or getline)`];
  return [];
}

/** `sed`: the `e` command and the `e` flag of `s` run text as a command. */
function sedReasons(inv: Invocation): string[] {
  const scripts: Word[] = [];
  let operand: Word | undefined;
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const w = args[i] as Word;
    const t = w.text;
    if (t === "-e" || t === "--expression") {
      const next = args[++i];
      if (next !== undefined) scripts.push(next);
    } else if (t.startsWith("--expression=")) scripts.push({ ...w, text: t.slice(13) });
    else if (/^-[a-zA-Z]*e./.test(t) && !t.startsWith("--")) scripts.push({ ...w, text: t.slice(t.indexOf("e") + 1) });
    else if (t === "-f" || t === "--file" || t === "-l" || t === "--line-length") i++;
    else if (t.startsWith("-") && t.length > 1) continue;
    else if (operand === undefined) operand = w;
  }
  if (scripts.length === 0 && operand !== undefined) scripts.push(operand);
  for (const s of scripts) {
    if (s.opaque !== undefined) return [`the sed script is built at run time (${s.opaque})`];
    if (sedRunsCommand(s.text)) return [`the sed script '${clip(s.text)}' runs a command ('e')`];
  }
  return [];
}

/** Whether a sed script holds an `e` command or an `s` command with the `e` flag. */
export function sedRunsCommand(script: string): boolean {
  let i = 0;
  const n = script.length;
  const skipTo = (stops: string) => {
    while (i < n && !stops.includes(script[i] as string)) i++;
  };
  const readDelimited = (delim: string) => {
    while (i < n && script[i] !== delim) i += script[i] === "\\" ? 2 : 1;
    i++;
  };
  const address = () => {
    const c = script[i];
    if (c === "/") {
      i++;
      readDelimited("/");
    } else if (c === "\\") {
      const delim = script[i + 1] as string;
      i += 2;
      readDelimited(delim);
    } else if (c === "$") i++;
    else while (i < n && /[0-9~]/.test(script[i] as string)) i++;
    while (i < n && /[IM]/.test(script[i] as string)) i++;
  };
  while (i < n) {
    while (i < n && /[\s;{}]/.test(script[i] as string)) i++;
    if (i >= n) break;
    address();
    if (script[i] === ",") {
      i++;
      address();
    }
    while (i < n && /[\s!]/.test(script[i] as string)) i++;
    const c = script[i++];
    if (c === "e") return true;
    if (c === "s" || c === "y") {
      const delim = script[i++] as string;
      readDelimited(delim);
      readDelimited(delim);
      if (c === "s") {
        const flags = /^[a-zA-Z0-9]*/.exec(script.slice(i))?.[0] ?? "";
        if (flags.includes("e")) return true;
        i += flags.length;
        if (flags.includes("w")) skipTo("\n");
      }
    } else if (c === "a" || c === "i" || c === "c") {
      // Text to the end of the line, continued onto the next while a line ends in a backslash.
      do {
        skipTo("\n");
        i++;
      } while (i <= n && script[i - 2] === "\\");
    } else if (c !== undefined && "rRwWbtT:#".includes(c)) skipTo(c === "b" || c === "t" || c === "T" ? ";\n" : "\n");
  }
  return false;
}

/** The options and subcommands in a known program's row that run text, and the ones checked by value. */
function optionReasons(name: string, row: KnownProgram, inv: Invocation): string[] {
  const out: string[] = [];
  const args = inv.args;
  const subIndex = args.findIndex((w, i) => !w.text.startsWith("-") && !(i > 0 && isValueOf(name, (args[i - 1] as Word).text)));
  const sub = subIndex === -1 ? undefined : (args[subIndex] as Word).text;
  const subRuns = sub !== undefined ? row.subcommandRuns?.[sub] : undefined;
  // A runner's own options end where the program it runs begins (`npx eslint -c x` is eslint's `-c`).
  const end = operandHead(row, args) ?? args.length;
  for (const [i, w] of args.slice(0, end).entries()) {
    const t = w.text;
    const hit = row.runs?.find((o) => optionMatches(o, t)) ?? (i > subIndex ? subRuns?.find((o) => optionMatches(o, t)) : undefined);
    if (hit !== undefined) out.push(`'${name} ${hit}' runs a command it is given`);
  }
  // A word decided at run time where an option could stand may be the option that runs text (`git $OPTS log`).
  if (row.runs !== undefined || row.runsSubcommands !== undefined || row.subcommandRuns !== undefined) {
    for (const [i, w] of args.slice(0, end).entries()) {
      const prev = i > 0 ? (args[i - 1] as Word).text : "";
      const valueOfOption = /^-/.test(prev) && !prev.includes("=");
      if (w.opaque !== undefined && /^[$`]/.test(w.text) && !valueOfOption && !literalSubstitution(w))
        out.push(`'${name}' is given '${clip(w.text, 24)}', decided at run time, where an option that runs a command could stand`);
    }
  }
  const second = args.slice(subIndex + 1).find((w) => !w.text.startsWith("-"))?.text;
  const runningSub = sub === undefined ? undefined : row.runsSubcommands?.find((s) => s === sub || s === `${sub} ${second}`);
  if (runningSub !== undefined) out.push(`'${name} ${runningSub}' runs commands it is given`);
  if (name === "git") out.push(...gitReasons(args, subIndex));
  if (name === "ssh" || name === "scp" || name === "sftp" || name === "rsync") {
    for (const [i, w] of args.entries()) {
      const value = w.text === "-o" ? args[i + 1]?.text : w.text.startsWith("-o") ? w.text.slice(2) : undefined;
      if (value !== undefined && SSH_RUNNING_KEYS.test(value.trim())) out.push(`'${name} -o ${clip(value, 24)}' runs a command`);
    }
  }
  if (name === "apt-get" || name === "apt" || name === "apt-cache") {
    for (const [i, w] of args.entries()) {
      const value =
        w.text === "-o" ? args[i + 1]?.text : w.text.startsWith("-o") ? w.text.slice(2) : w.text.startsWith("--option=") ? w.text.slice(9) : undefined;
      if (value !== undefined && APT_RUNNING_KEYS.test(value.split("=")[0] as string)) out.push(`'${name} -o ${clip(value, 32)}' runs a command`);
    }
  }
  if (name === "make" || name === "gmake") {
    for (const w of args) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(w.text);
      if (m && (m[1] === "SHELL" || m[1] === ".SHELLFLAGS" || /[\s;|&$`]/.test(m[2] as string) || w.opaque !== undefined))
        out.push(`'make ${clip(w.text, 24)}' sets a variable a recipe may run`);
    }
  }
  if (name === "sqlite3") {
    for (const w of args)
      if (/^\s*\.(shell|system|once|output|import|load)\b|\|/.test(w.text)) out.push(`'sqlite3 ${clip(w.text, 24)}' runs a command or loads code`);
  }
  if (name === "psql" || name === "mysql") {
    for (const w of args) if (/\\!|\\o\s*\||\\copy[^;]*program|\bsystem\b/i.test(w.text)) out.push(`'${name}' is given a shell escape`);
  }
  return out;
}

function isValueOf(program: string, option: string): boolean {
  if (program === "git") return option === "-c" || option === "-C" || option === "--git-dir" || option === "--work-tree" || option === "--namespace";
  return false;
}

/** `--long` matches as written or with `=value`; `-x` as written, with its value attached, or inside a cluster. */
function optionMatches(option: string, word: string): boolean {
  if (option.startsWith("+")) return word.startsWith(option);
  if (option.startsWith("--") || option.length > 2)
    return word === option || word.startsWith(`${option}=`) || (option.length > 2 && !option.startsWith("--") && word.startsWith(option));
  if (!/^-[a-zA-Z]/.test(word) || word.startsWith("--")) return false;
  return word.slice(1).includes(option.slice(1));
}

/** `git -c KEY=…`, `git config KEY VALUE`, `--config`, `ext::` and `fd::` remotes. */
function gitReasons(args: Word[], subIndex: number): string[] {
  const out: string[] = [];
  const checkKey = (assignment: string, how: string) => {
    const key = (assignment.split("=")[0] as string).trim();
    if (!SAFE_GIT_CONFIG_KEYS.test(key)) out.push(`'${how} ${clip(key, 32)}' may name a command git runs`);
  };
  for (const [i, w] of args.entries()) {
    const t = w.text;
    if (t === "-c" && i < subIndex) {
      const next = args[i + 1];
      if (next !== undefined) checkKey(next.text, "git -c");
    } else if (t.startsWith("-c") && t.length > 2 && i < subIndex) checkKey(t.slice(2), "git -c");
    else if ((t === "--config" || t === "-c") && i > subIndex) {
      // `git clone -c key=value`; `git switch -c branch` is not configuration.
      const next = args[i + 1];
      if (next?.text.includes("=")) checkKey(next.text, "git --config");
    } else if (t.startsWith("--config=")) checkKey(t.slice(9), "git --config");
    if (/^(ext|fd)::/i.test(t) || /^[a-z0-9+.-]*::/i.test(t)) out.push(`the remote '${clip(t, 24)}' runs a command through git's remote helpers`);
  }
  if (subIndex !== -1 && args[subIndex]?.text === "config") {
    const operands = args.slice(subIndex + 1).filter((w) => !w.text.startsWith("-"));
    const key = operands[0];
    if (key !== undefined && operands.length > 1) checkKey(key.text, "git config");
  }
  return out;
}

/** Whether this call of a known program talks to the network. */
function isNetworkUse(name: string, row: KnownProgram, inv: Invocation): boolean {
  if (DOWNLOADERS.has(name) || NETWORK_TOOLS.has(name)) return true;
  if (row.network === undefined) return false;
  if (name !== "git") return true;
  const sub = inv.args.find((w) => !w.text.startsWith("-"))?.text;
  return sub !== undefined && ["push", "fetch", "pull", "clone", "ls-remote", "remote", "send-email", "request-pull", "submodule", "archive"].includes(sub);
}

/** A network client with a command substitution, file content or standard input in its request, or a protocol other than HTTP. */
function networkReasons(inv: Invocation, piped: boolean, redirected: boolean): string[] {
  const name = inv.program;
  const out: string[] = [];
  for (const [i, w] of inv.args.entries()) {
    if (w.substitutions.length > 0 && !literalSubstitution(w)) out.push(`'${name}' sends the output of a command substitution ('${clip(w.text, 32)}')`);
    if (!DOWNLOADERS.has(name)) continue;
    const t = w.text;
    const prev = inv.args[i - 1]?.text ?? "";
    if (/^@|=@|=</.test(t) || /^-[a-zA-Z]*[dFHT]@/.test(t)) out.push(`'${name}' sends the content of a file ('${clip(t, 24)}')`);
    else if (/^(-T|--upload-file|--post-file|--body-file)$/.test(prev) || /^--(upload-file|post-file|body-file)=/.test(t))
      out.push(`'${name}' sends the content of a file ('${clip(t, 24)}')`);
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(t)?.[1]?.toLowerCase();
    if (scheme !== undefined && !["http", "https", "ftp", "ftps"].includes(scheme)) out.push(`'${name}' speaks '${scheme}://', which can carry anything`);
  }
  if ((DOWNLOADERS.has(name) || NETWORK_TOOLS.has(name)) && (piped || redirected)) out.push(`'${name}' may send its standard input`);
  // `scp`/`rsync` send file content by design: a copy to a remote host of what looks like a credential is not routine.
  if (COPIERS.has(name)) {
    const operands = inv.args.filter((w) => !w.text.startsWith("-"));
    const secret = operands.find((w) => SECRET_PATH.test(w.text));
    if (secret !== undefined && operands.some((w) => /^[^/]*:/.test(w.text)))
      out.push(`'${name}' copies '${clip(secret.text, 24)}', which looks like a credential, to another host`);
  }
  return out;
}

/** `$(cat <<'EOF' … EOF)`: a substitution that only prints a quoted here-document is literal text. */
function literalSubstitution(w: Word): boolean {
  return (
    w.substitutions.length > 0 &&
    w.substitutions.every((s) =>
      s.pipelines.every((p) =>
        p.stages.every(
          (st) =>
            st.kind === "simple" &&
            st.words.length === 1 &&
            st.words[0]?.text === "cat" &&
            st.redirects.length === 1 &&
            st.redirects[0]?.heredoc !== undefined &&
            st.redirects[0].quoted === true,
        ),
      ),
    )
  );
}

/** Whether an invocation decodes or decompresses what it prints. */
function decodes(inv: Invocation): boolean {
  if (inv.program === "python" && inv.args.some((w, i) => w.text === "-m" && DECODING_MODULES.has(inv.args[i + 1]?.text ?? ""))) return true;
  const rule = DECODING_PROGRAMS[inv.program];
  if (rule === undefined) return false;
  if (rule === true) return true;
  return inv.args.some((w) => rule.test(w.text));
}

/** The index of the program word a runner (`npx eslint`, `uv run pytest`) runs, when it runs one. */
function operandHead(row: KnownProgram, args: readonly Word[]): number | undefined {
  if (row.runsOperands === undefined) return undefined;
  let i = 0;
  const skipOptions = () => {
    while (i < args.length && (args[i] as Word).text.startsWith("-") && (args[i] as Word).text !== "--") {
      const t = (args[i] as Word).text;
      i += /^(-p|--package|--filter|-F|--dir|-C|--with|--from|--python)$/.test(t) ? 2 : 1;
    }
  };
  skipOptions();
  const sub = args[i]?.text;
  const matched = row.runsOperands.find((s) => s === "" || s.split(" ")[0] === sub);
  if (matched === undefined) return undefined;
  if (matched !== "") {
    i += matched.split(" ").length;
    skipOptions();
  }
  if (args[i]?.text === "--") i++;
  return i < args.length ? i : undefined;
}

/** The program a runner runs, as an invocation to prove in turn. */
function operandProgram(name: string, row: KnownProgram, inv: Invocation): Invocation | undefined {
  const at = operandHead(row, inv.args);
  const head = at === undefined ? undefined : inv.args[at];
  if (at === undefined || head === undefined) return undefined;
  const named = head.text.replace(/(.)@[^/]*$/, "$1");
  const program = programFamily(named.replace(/^.*\//, ""));
  const base = { args: inv.args.slice(at + 1), redirects: [], env: [], wrappers: [...(inv.wrappers ?? []), name], named: head.text };
  return head.opaque !== undefined ? { program, opaque: `the program '${clip(head.text)}' (${head.opaque})`, ...base } : { program, ...base };
}
