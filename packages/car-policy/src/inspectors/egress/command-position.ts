/**
 * Which programs a shell command line actually runs. A word is a program
 * only in command position: first in a simple command after any `VAR=value`
 * assignments and reserved words, or the command a wrapper (`sudo`, `env`,
 * `timeout`, `docker run`, …) runs in turn. Text a shell will read — a
 * `bash -c` argument, a here-document fed to a shell, `eval`, command
 * substitutions anywhere — is read as a script in its own right; any other
 * text (a commit message, a grep pattern, a here-document given to `cat` or
 * `python3`) is only text.
 */
import { afterGlobalOptions } from "./command-shape.ts";
import { INTERPRETERS, programFamily, SHELLS, SOURCE_BUILTINS, WRAPPERS } from "./program-tables.ts";
import { parseShell, type Pipeline, type Redirect, type Script, type SimpleCommand, type Stage, type Word } from "./shell-syntax.ts";

/** One program run by the command line. */
export interface Invocation {
  /**
   * The program's file name in its family spelling (`programFamily`): `nc`
   * for `/usr/bin/nc`, `bin/nc`, `$HOME/nc`, `"n"c` or `NC`; `python` for
   * `python3.12`. For an opaque program, the word as written.
   */
  program: string;
  /** Set when the program cannot be resolved statically, saying why (`a parameter expansion`). */
  opaque?: string;
  /** The words after the program. */
  args: Word[];
  redirects: Redirect[];
  /** Variables assigned for this command (`http_proxy=… curl`, `env HTTPS_PROXY=… curl`). */
  env: string[];
  /** The wrappers peeled off to reach the program, outermost first (`sudo`, `env`, `xargs`, `find` for `-exec`, `docker`): a program `xargs` runs gets words the reader never saw; absent when none. */
  wrappers?: string[];
  /** The program word as written (`./scripts/build.sh`, `/usr/bin/nc`), when it differs from `program`. */
  named?: string;
}

/** A pipeline as the programs in each stage (a `( … )` stage may run several). */
export type StagePrograms = Invocation[][];

export { SHELLS };

const RESERVED = new Set(["!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "time", "coproc"]);
/** Reserved words whose command's words are never programs (`for x in nc …`). */
const NOT_COMMANDS = new Set(["for", "case", "select", "function", "[[", "]]"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
/** Builtins whose operands may be assignments that name later programs (`declare N=nc; $N …`). */
const DECLARERS = new Set(["export", "readonly", "declare", "typeset", "local"]);

/** `docker run`/`podman exec` options that take a value, so the image or container is found. */
const CONTAINER_VALUED_SHORT = "ehlmpuvwc";
const CONTAINER_VALUED_LONG = new Set([
  "--env",
  "--env-file",
  "--name",
  "--network",
  "--net",
  "--volume",
  "--publish",
  "--workdir",
  "--user",
  "--mount",
  "--entrypoint",
  "--label",
  "--platform",
  "--hostname",
  "--memory",
  "--cpus",
  "--add-host",
  "--device",
  "--dns",
  "--cap-add",
  "--cap-drop",
  "--security-opt",
  "--ulimit",
  "--restart",
  "--pull",
  "--runtime",
  "--tmpfs",
  "--shm-size",
  "--log-driver",
  "--log-opt",
  "--volumes-from",
  "--link",
  "--gpus",
  "--detach-keys",
  "--cidfile",
  "--ipc",
  "--pid",
]);

/** Every pipeline in the command line, at every nesting level, as the programs each stage runs. */
export function pipelinesOf(command: string): { pipelines: StagePrograms[]; truncated: boolean; incomplete?: string } {
  const out: StagePrograms[] = [];
  const root = parseShell(command);
  let truncated = root.truncated;
  let incomplete: string | undefined;
  // `N=nc; $N host 4444`: plain assignments seen so far name the program a bare `$N` runs.
  const vars = new Map<string, string>();
  const visit = (script: Script, depth: number) => {
    if (script.truncated) truncated = true;
    incomplete ??= script.incomplete;
    if (depth > 16) {
      truncated = true;
      return;
    }
    for (const pipeline of script.pipelines) {
      out.push(pipeline.stages.map((stage) => stagePrograms(stage, vars)));
      for (const nested of nestedScripts(pipeline, vars)) visit(nested, depth + 1);
      for (const stage of pipeline.stages) if (stage.kind === "simple") recordAssignments(stage, vars);
    }
  };
  visit(root, 0);
  return incomplete === undefined ? { pipelines: out, truncated } : { pipelines: out, truncated, incomplete };
}

/** Every program the command line runs, at any nesting level. */
export function invocationsOf(command: string): Invocation[] {
  return pipelinesOf(command).pipelines.flat(2);
}

/**
 * Literal patches handed to `apply_patch`/`applypatch`: a here-document fed to
 * it, or its first argument. Scripts read from files and text built at run
 * time are not decoded.
 */
export function patches(command: string): string[] {
  const found: string[] = [];
  for (const inv of invocationsOf(command)) {
    if (inv.program !== "apply_patch" && inv.program !== "applypatch") continue;
    for (const r of inv.redirects) if (r.heredoc !== undefined) found.push(r.heredoc);
    const first = inv.args[0];
    if (first !== undefined) found.push(first.text);
  }
  return found;
}

/** Every program a parsed script runs, at any nesting level (bounded like `pipelinesOf`). */
export function scriptInvocations(script: Script, depth = 0): Invocation[] {
  const found: Invocation[] = [];
  if (depth > 16) return found;
  for (const pipeline of script.pipelines) {
    for (const stage of pipeline.stages) for (const inv of stagePrograms(stage, new Map())) found.push(inv);
    for (const nested of nestedScripts(pipeline, new Map())) for (const inv of scriptInvocations(nested, depth + 1)) found.push(inv);
  }
  return found;
}

function stagePrograms(stage: Stage, vars: ReadonlyMap<string, string>): Invocation[] {
  if (stage.kind === "simple") return commandInvocations(stage, vars);
  const found: Invocation[] = [];
  for (const p of stage.body.pipelines) for (const s of p.stages) for (const inv of stagePrograms(s, vars)) found.push(inv);
  return found;
}

/** Records `NAME=value` from a command made only of assignments (optionally after `export`, `declare`, …). */
function recordAssignments(command: SimpleCommand, vars: Map<string, string>): void {
  let words = command.words;
  if (DECLARERS.has(words[0]?.text ?? "")) words = words.slice(1).filter((w) => !w.text.startsWith("-"));
  if (words.length === 0 || !words.every((w) => ASSIGNMENT.test(w.text))) return;
  for (const w of words) {
    const eq = w.text.indexOf("=");
    const name = w.text.slice(0, eq).replace(/\+$/, "");
    // A value decided at run time names nothing: `$N` is then opaque, not the last literal value.
    if (w.opaque === undefined) vars.set(name, w.text.slice(eq + 1));
    else vars.delete(name);
  }
}

/** The programs one simple command runs: its own, and those `find -exec` runs for it. */
export function commandInvocations(command: SimpleCommand, vars: ReadonlyMap<string, string> = new Map()): Invocation[] {
  const inv = invocationOf(command, vars);
  if (inv === undefined) return [];
  const found = [inv];
  if (inv.program === "find" || inv.program === "fd" || inv.program === "fdfind") {
    const starts = inv.program === "find" ? ["-exec", "-execdir", "-ok", "-okdir"] : ["-x", "--exec", "-X", "--exec-batch"];
    for (let i = 0; i < inv.args.length; i++) {
      if (!starts.includes((inv.args[i] as Word).text)) continue;
      let end = i + 1;
      while (end < inv.args.length && !/^[;+]$/.test((inv.args[end] as Word).text)) end++;
      const inner = invocationOf({ kind: "simple", words: inv.args.slice(i + 1, end), redirects: [] }, vars);
      if (inner !== undefined) found.push({ ...inner, wrappers: [inv.program, ...(inner.wrappers ?? [])] });
      i = end;
    }
  }
  return found;
}

/** The program a simple command runs, after assignments, reserved words and wrappers. */
export function invocationOf(command: SimpleCommand, vars: ReadonlyMap<string, string> = new Map()): Invocation | undefined {
  let words = command.words;
  const env: string[] = [];
  let i = 0;
  while (i < words.length) {
    const w = words[i] as Word;
    if (ASSIGNMENT.test(w.text)) {
      env.push(w.text.slice(0, w.text.indexOf("=")).replace(/\+$/, ""));
      i++;
    } else if (RESERVED.has(w.text)) i++;
    else break;
  }
  if (i >= words.length || NOT_COMMANDS.has((words[i] as Word).text)) return undefined;
  words = words.slice(i);
  const wrappers: string[] = [];
  const withWrappers = (inv: Invocation): Invocation => (wrappers.length > 0 ? { ...inv, wrappers } : inv);
  // Wrappers nest (`sudo env FOO=1 timeout 5 nc …`); each pass peels one.
  for (let guard = 0; guard < 16; guard++) {
    const head = words[0];
    if (head === undefined) return undefined;
    const { name, opaque } = resolveProgram(head, vars);
    const base = { args: words.slice(1), redirects: command.redirects, env, ...(head.text !== name ? { named: head.text } : {}) };
    if (opaque !== undefined) return withWrappers({ program: name, opaque, ...base });
    const inner = unwrap(name, words.slice(1), env);
    if (inner === "lookup") return undefined;
    if (inner === undefined) return withWrappers({ program: name, ...base });
    wrappers.push(name);
    // A wrapper that runs a script string is, to the reader, `sh -c script`.
    if ("script" in inner) return withWrappers({ program: "sh", args: [{ text: "-c", substitutions: [] }, inner.script], redirects: command.redirects, env });
    words = inner.words;
  }
  return undefined;
}

type Unwrapped = { words: Word[] } | { script: Word };

/**
 * What a wrapper runs: the command words, or a script string. `undefined`
 * when `name` is no wrapper (or wraps nothing), `"lookup"` for `command -v`,
 * which names a program without running it. Assignments `env` makes are
 * added to `env`.
 */
function unwrap(name: string, rest: Word[], env: string[]): Unwrapped | "lookup" | undefined {
  if (name === "docker" || name === "podman" || name === "nerdctl") return words(containerCommand(rest.slice(afterGlobalOptions(name, rest))));
  if (name === "kubectl" || name === "oc") {
    const dashes = rest.findIndex((w) => w.text === "--");
    return rest[afterGlobalOptions(name, rest)]?.text === "exec" && dashes !== -1 ? words(nonEmpty(rest.slice(dashes + 1))) : undefined;
  }
  const spec = WRAPPERS[name];
  if (spec === undefined) return undefined;
  let i = 0;
  if (spec.subcommands !== undefined) {
    // `tmux new …`: options may come before the subcommand.
    while (i < rest.length && (rest[i] as Word).text.startsWith("-")) i += spec.valued.includes((rest[i] as Word).text.slice(-1)) ? 2 : 1;
    if (!spec.subcommands.includes(rest[i]?.text ?? "")) return undefined;
    i++;
  }
  let positional = spec.positional ?? 0;
  while (i < rest.length) {
    const t = (rest[i] as Word).text;
    if (t === "--") {
      i++;
      break;
    }
    if (name === "command" && /^-[a-zA-Z]*[vV]/.test(t)) return "lookup";
    if (t === "-") {
      // `su - root`, `env -`: a login or empty environment, not a command.
      i++;
      continue;
    }
    if (name === "env" && ASSIGNMENT.test(t)) {
      env.push(t.slice(0, t.indexOf("=")));
      i++;
      continue;
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      const option = eq === -1 ? t : t.slice(0, eq);
      if (spec.scriptLong?.includes(option)) {
        const value = eq === -1 ? rest[i + 1] : { ...(rest[i] as Word), text: t.slice(eq + 1) };
        return value === undefined ? undefined : { script: value };
      }
      i += eq === -1 && spec.long?.includes(t) ? 2 : 1;
      continue;
    }
    if (t.startsWith("-") && t.length > 1) {
      // A clustered short option whose letter takes a value consumes the rest of the word, or the next word.
      const letters = t.slice(1);
      const at = [...letters].findIndex((l) => spec.valued.includes(l) || spec.script?.includes(l));
      if (at !== -1 && spec.script?.includes(letters[at] as string)) {
        const inline = letters.slice(at + 1);
        const value = inline !== "" ? { ...(rest[i] as Word), text: inline } : rest[i + 1];
        return value === undefined ? undefined : { script: value };
      }
      i += at !== -1 && at === letters.length - 1 ? 2 : 1;
      continue;
    }
    if (positional > 0) {
      positional--;
      i++;
      continue;
    }
    break;
  }
  if (spec.scriptOnly) return undefined;
  let operands = rest.slice(i);
  const stop = operands.findIndex((w) => spec.stopAt?.includes(w.text));
  if (stop !== -1) operands = operands.slice(0, stop);
  if (operands.length === 0) return undefined;
  return spec.joins ? { script: joinWords(operands) } : { words: operands };
}

function words(list: Word[] | undefined): Unwrapped | undefined {
  return list === undefined ? undefined : { words: list };
}

/** Words a wrapper hands to `sh -c` as one command line. */
function joinWords(list: Word[]): Word {
  const joined: Word = { text: list.map((w) => w.text).join(" "), substitutions: list.flatMap((w) => w.substitutions) };
  const opaque = list.find((w) => w.opaque !== undefined)?.opaque;
  if (opaque !== undefined) joined.opaque = opaque;
  return joined;
}

/** `docker run [opts] IMAGE CMD…` and `docker exec [opts] CONTAINER CMD…`: the CMD. */
function containerCommand(rest: Word[]): Word[] | undefined {
  let i = 0;
  if (rest[i]?.text === "container") i++;
  const sub = rest[i]?.text;
  if (sub !== "run" && sub !== "exec") return undefined;
  i++;
  while (i < rest.length) {
    const t = (rest[i] as Word).text;
    if (t.startsWith("--")) {
      i += t.includes("=") || !CONTAINER_VALUED_LONG.has(t) ? 1 : 2;
    } else if (t.startsWith("-") && t.length > 1) {
      const last = t[t.length - 1] as string;
      i += CONTAINER_VALUED_SHORT.includes(last) ? 2 : 1;
    } else break;
  }
  return nonEmpty(rest.slice(i + 1)); // skip the image or container
}

function nonEmpty(list: Word[]): Word[] | undefined {
  return list.length > 0 ? list : undefined;
}

/**
 * The program a word names, in its family spelling; a path does not hide it,
 * and `$(which nc)` / `$(command -v nc)` name the program they look up. A
 * word the reader cannot resolve (an expansion it has no value for, a
 * substitution, a glob or brace expansion) is returned as written with
 * `opaque` saying why.
 */
export function resolveProgram(word: Word, vars: ReadonlyMap<string, string> = new Map()): { name: string; opaque?: string } {
  const variable = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(word.text);
  // After `IFS=…` an unquoted expansion splits where the reader cannot follow.
  const value = variable && !vars.has("IFS") ? vars.get(variable[1] as string) : undefined;
  if (value !== undefined) return { name: programFamily(baseName(value.trim().split(/\s+/)[0] as string)) };
  const lookup = /^(?:\$\(|`)\s*(?:which|command\s+-v|type\s+-p)\s+([^\s)`$]+)\s*(?:\)|`)$/.exec(word.text);
  if (lookup) return { name: programFamily(baseName((lookup[1] as string).replace(/[\\'"]/g, ""))) };
  // `$HOME/bin/nc`: the directory is decided at run time, the file name is not.
  const file = baseName(word.text);
  if (word.opaque !== undefined && file !== word.text && !/[$`*?[\]{}()]/.test(file)) return { name: programFamily(file) };
  if (word.opaque !== undefined) return { name: word.text, opaque: `the program name '${clip(word.text)}' (${word.opaque})` };
  if (word.text === "{}") return { name: word.text, opaque: "the program '{}' (a file name find substitutes)" };
  return { name: programFamily(baseName(word.text)) };
}

/** `resolveProgram(word).name`. */
export function programName(word: Word, vars: ReadonlyMap<string, string> = new Map()): string {
  return resolveProgram(word, vars).name;
}

/** Text quoted in a reason, cut short so a reason stays a line. */
export function clip(text: string, max = 40): string {
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

function baseName(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  const slash = trimmed.lastIndexOf("/");
  return slash === -1 ? trimmed : trimmed.slice(slash + 1);
}

/** Scripts a shell will read inside this pipeline: substitutions, `sh -c`, here-documents fed to a shell, `eval`. */
function nestedScripts(pipeline: Pipeline, vars: ReadonlyMap<string, string>): Script[] {
  const scripts: Script[] = [];
  const fromWords = (list: Word[]) => {
    for (const w of list) for (const s of w.substitutions) scripts.push(s);
  };
  const fromStage = (stage: Stage) => {
    for (const r of stage.redirects) fromWords([r.target]);
    if (stage.kind === "group") return; // its own pipelines are visited as a script
    fromWords(stage.words);
    for (const inv of commandInvocations(stage, vars)) {
      if (!SHELLS.has(inv.program) && inv.program !== "eval" && !SOURCE_BUILTINS.has(inv.program)) continue;
      const source = scriptSource(inv);
      if (source?.kind === "inline") scripts.push(parseShell(source.word.text));
      else if (source?.kind === "stdin") {
        for (const r of inv.redirects) {
          if (r.heredoc !== undefined) scripts.push(parseShell(r.heredoc));
          if (r.op === "<<<") scripts.push(parseShell(r.target.text));
        }
      }
    }
  };
  for (const stage of pipeline.stages) {
    if (stage.kind === "group") {
      fromStage(stage);
      scripts.push(stage.body);
    } else fromStage(stage);
  }
  return scripts;
}

/** Where an interpreter takes its program from. */
export type ScriptSource =
  /** `sh -c X`, `python -c X`, `eval X`: the word is the program. */
  | { kind: "inline"; word: Word }
  /** `sh file`, `source <(…)`: the file operand holds the program. */
  | { kind: "file"; word: Word }
  /** `sh`, `sh -s`, `python -`, `sh /dev/stdin`: standard input is the program. */
  | { kind: "stdin" };

const STDIN_FILES = new Set(["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"]);
/** Shell options that take a value (`bash -O extglob`, `--rcfile F`). */
const SHELL_VALUED = new Set(["-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-C", "--command"]);

/** The program source of a shell, `source`/`.`, `eval` or interpreter invocation; `undefined` for anything else. */
export function scriptSource(inv: Invocation): ScriptSource | undefined {
  if (inv.program === "eval") {
    return inv.args.length === 0 ? undefined : { kind: "inline", word: joinWords(inv.args) };
  }
  if (SOURCE_BUILTINS.has(inv.program)) {
    const file = inv.args[0];
    if (file === undefined) return undefined;
    return STDIN_FILES.has(file.text) ? { kind: "stdin" } : { kind: "file", word: file };
  }
  const shell = SHELLS.has(inv.program);
  const grammar = shell ? { inline: "c", valued: "" } : INTERPRETERS[inv.program];
  if (grammar === undefined) return undefined;
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as Word;
    const t = word.text;
    if (t === "--") {
      const file = args[i + 1];
      return file === undefined || STDIN_FILES.has(file.text) ? { kind: "stdin" } : { kind: "file", word: file };
    }
    if (t === "-") return { kind: "stdin" };
    if (shell && (SHELL_VALUED.has(t) || /^[-+][a-zA-Z]*[oO]$/.test(t))) {
      i++;
      continue;
    }
    if (t.startsWith("--")) {
      if (!shell && (t === "--eval" || t === "--print")) return inlineAt(args, i + 1);
      continue;
    }
    if ((t.startsWith("-") || (shell && t.startsWith("+"))) && t.length > 1) {
      const letters = t.slice(1);
      for (let k = 0; k < letters.length; k++) {
        const letter = letters[k] as string;
        if (grammar.inline.includes(letter)) {
          const rest = letters.slice(k + 1);
          if (rest !== "" && !shell) return { kind: "inline", word: { ...word, text: rest } };
          // `bash -c -- X`: `--` ends the options; X is the script.
          return inlineAt(args, shell && args[i + 1]?.text === "--" ? i + 2 : i + 1);
        }
        if (shell && letter === "s") return { kind: "stdin" };
        if (!shell && grammar.valued?.includes(letter)) {
          if (letter === "m") return { kind: "file", word: args[i + 1] ?? word }; // `python -m module`
          if (k === letters.length - 1) i++;
          break;
        }
      }
      continue;
    }
    return STDIN_FILES.has(t) ? { kind: "stdin" } : { kind: "file", word };
  }
  return { kind: "stdin" };
}

function inlineAt(args: Word[], i: number): ScriptSource | undefined {
  const word = args[i];
  return word === undefined ? undefined : { kind: "inline", word };
}

/** The `-c` script of a shell invocation (`bash -c '…'`, `sh -lc '…'`). */
export function shellCommandString(inv: Invocation): string | undefined {
  const source = SHELLS.has(inv.program) ? scriptSource(inv) : undefined;
  return source?.kind === "inline" ? source.word.text : undefined;
}

/** Whether a shell or interpreter takes its program from standard input. */
export function readsScriptFromStdin(inv: Invocation): boolean {
  return scriptSource(inv)?.kind === "stdin";
}
