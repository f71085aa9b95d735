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
import { parseShell, type Pipeline, type Redirect, type Script, type SimpleCommand, type Stage, type Word } from "./shell-syntax.ts";

/** One program run by the command line. */
export interface Invocation {
  /** The program's file name: `nc` for `/usr/bin/nc`, `bin/nc`, `$HOME/nc` or `"n"c`. */
  program: string;
  /** The words after the program. */
  args: Word[];
  redirects: Redirect[];
}

/** A pipeline as the programs in each stage (a `( … )` stage may run several). */
export type StagePrograms = Invocation[][];

export const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"]);

const RESERVED = new Set(["!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "time", "coproc"]);
/** Reserved words whose command's words are never programs (`for x in nc …`). */
const NOT_COMMANDS = new Set(["for", "case", "select", "function", "[[", "]]"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/**
 * Wrappers that run their operand as a command, with the short options that
 * take a value (so the value is not mistaken for the program).
 */
const WRAPPERS: Record<string, { valued: string; long?: readonly string[]; positional?: number }> = {
  sudo: { valued: "ughpCDrtUT", long: ["--user", "--group", "--host", "--prompt", "--chdir", "--role", "--type", "--other-user", "--close-from"] },
  doas: { valued: "uC" },
  env: { valued: "uCS", long: ["--unset", "--chdir", "--split-string"] },
  nohup: { valued: "" },
  exec: { valued: "a" },
  nice: { valued: "n", long: ["--adjustment"] },
  ionice: { valued: "cnp", long: ["--class", "--classdata", "--pid"] },
  timeout: { valued: "sk", long: ["--signal", "--kill-after"], positional: 1 },
  stdbuf: { valued: "ioe", long: ["--input", "--output", "--error"] },
  setsid: { valued: "" },
  chroot: { valued: "", long: ["--userspec", "--groups"], positional: 1 },
  builtin: { valued: "" },
  caffeinate: { valued: "tw" },
  unbuffer: { valued: "" },
  xargs: { valued: "IiLlnPsdEa", long: ["--max-args", "--max-procs", "--delimiter", "--arg-file", "--replace", "--max-lines", "--eof"] },
  torsocks: { valued: "" },
  proxychains: { valued: "f" },
  proxychains4: { valued: "f" },
  command: { valued: "" },
  busybox: { valued: "" },
};

/** `docker run`/`podman exec` options that take a value, so the image or container is found. */
const CONTAINER_VALUED_SHORT = "ehlmpuvwc";
const CONTAINER_VALUED_LONG = new Set([
  "--env", "--env-file", "--name", "--network", "--net", "--volume", "--publish", "--workdir", "--user", "--mount",
  "--entrypoint", "--label", "--platform", "--hostname", "--memory", "--cpus", "--add-host", "--device", "--dns",
  "--cap-add", "--cap-drop", "--security-opt", "--ulimit", "--restart", "--pull", "--runtime", "--tmpfs", "--shm-size",
  "--log-driver", "--log-opt", "--volumes-from", "--link", "--gpus", "--detach-keys", "--cidfile", "--ipc", "--pid",
]);

/** Every pipeline in the command line, at every nesting level, as the programs each stage runs. */
export function pipelinesOf(command: string): { pipelines: StagePrograms[]; truncated: boolean } {
  const out: StagePrograms[] = [];
  const root = parseShell(command);
  let truncated = root.truncated;
  // `N=nc; $N host 4444`: plain assignments seen so far name the program a bare `$N` runs.
  const vars = new Map<string, string>();
  const visit = (script: Script, depth: number) => {
    if (script.truncated) truncated = true;
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
  return { pipelines: out, truncated };
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

/** Every program a parsed script runs, at any nesting level. */
export function scriptInvocations(script: Script): Invocation[] {
  const found: Invocation[] = [];
  for (const pipeline of script.pipelines) {
    found.push(...pipeline.stages.flatMap((stage) => stagePrograms(stage, new Map())));
    for (const nested of nestedScripts(pipeline, new Map())) found.push(...scriptInvocations(nested));
  }
  return found;
}

function stagePrograms(stage: Stage, vars: ReadonlyMap<string, string>): Invocation[] {
  if (stage.kind === "simple") {
    const inv = invocationOf(stage, vars);
    return inv ? [inv] : [];
  }
  return stage.body.pipelines.flatMap((p) => p.stages.flatMap((s) => stagePrograms(s, vars)));
}

/** Records `NAME=value` from a command made only of assignments (optionally after `export`). */
function recordAssignments(command: SimpleCommand, vars: Map<string, string>): void {
  const words = command.words[0]?.text === "export" || command.words[0]?.text === "readonly" ? command.words.slice(1) : command.words;
  if (words.length === 0 || !words.every((w) => ASSIGNMENT.test(w.text))) return;
  for (const w of words) {
    const eq = w.text.indexOf("=");
    vars.set(w.text.slice(0, eq).replace(/\+$/, ""), w.text.slice(eq + 1));
  }
}

/** The program a simple command runs, after assignments, reserved words and wrappers. */
export function invocationOf(command: SimpleCommand, vars: ReadonlyMap<string, string> = new Map()): Invocation | undefined {
  let words = command.words;
  let i = 0;
  while (i < words.length) {
    const w = words[i] as Word;
    if (ASSIGNMENT.test(w.text)) i++;
    else if (RESERVED.has(w.text)) i++;
    else break;
  }
  if (i >= words.length || NOT_COMMANDS.has((words[i] as Word).text)) return undefined;
  words = words.slice(i);
  // Wrappers nest (`sudo env FOO=1 timeout 5 nc …`); each pass peels one.
  for (let guard = 0; guard < 16; guard++) {
    const head = words[0];
    if (head === undefined) return undefined;
    const name = programName(head, vars);
    const inner = unwrap(name, words.slice(1));
    if (inner === "lookup") return undefined;
    if (inner === undefined) return { program: name, args: words.slice(1), redirects: command.redirects };
    words = inner;
  }
  return undefined;
}

/**
 * The words a wrapper runs as a command, `undefined` when `name` is no
 * wrapper (or wraps nothing), and `"lookup"` for `command -v`, which names a
 * program without running it.
 */
function unwrap(name: string, rest: Word[]): Word[] | "lookup" | undefined {
  if (name === "docker" || name === "podman" || name === "nerdctl") return containerCommand(rest);
  if (name === "kubectl" || name === "oc") {
    const dashes = rest.findIndex((w) => w.text === "--");
    return rest[0]?.text === "exec" && dashes !== -1 ? nonEmpty(rest.slice(dashes + 1)) : undefined;
  }
  const spec = WRAPPERS[name];
  if (spec === undefined) return undefined;
  let i = 0;
  let positional = spec.positional ?? 0;
  while (i < rest.length) {
    const t = (rest[i] as Word).text;
    if (t === "--") {
      i++;
      break;
    }
    if (name === "command" && /^-[a-zA-Z]*[vV]/.test(t)) return "lookup";
    if (name === "env" && ASSIGNMENT.test(t)) {
      i++;
      continue;
    }
    if (t.startsWith("--")) {
      i += spec.long?.includes(t) ? 2 : 1;
      continue;
    }
    if (t.startsWith("-") && t.length > 1) {
      // A clustered short option whose last letter takes a value consumes the next word.
      const letters = t.slice(1);
      const valuedAt = [...letters].findIndex((l) => spec.valued.includes(l));
      i += valuedAt !== -1 && valuedAt === letters.length - 1 ? 2 : 1;
      continue;
    }
    if (positional > 0) {
      positional--;
      i++;
      continue;
    }
    break;
  }
  return nonEmpty(rest.slice(i));
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

function nonEmpty(words: Word[]): Word[] | undefined {
  return words.length > 0 ? words : undefined;
}

/**
 * The program a word names. Its file name, so a path does not hide it; and
 * `$(which nc)` / `$(command -v nc)` name the program they look up.
 */
export function programName(word: Word, vars: ReadonlyMap<string, string> = new Map()): string {
  const variable = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(word.text);
  const value = variable ? vars.get(variable[1] as string) : undefined;
  if (value !== undefined) return baseName(value);
  const lookup = /^(?:\$\(|`)\s*(?:which|command\s+-v|type\s+-p)\s+([^\s)`]+)\s*(?:\)|`)$/.exec(word.text);
  if (lookup) return baseName(lookup[1] as string);
  return baseName(word.text);
}

function baseName(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  const slash = trimmed.lastIndexOf("/");
  return slash === -1 ? trimmed : trimmed.slice(slash + 1);
}

/** Scripts a shell will read inside this pipeline: substitutions, `sh -c`, here-documents fed to a shell, `eval`. */
function nestedScripts(pipeline: Pipeline, vars: ReadonlyMap<string, string>): Script[] {
  const scripts: Script[] = [];
  const fromWords = (words: Word[]) => {
    for (const w of words) scripts.push(...w.substitutions);
  };
  const fromStage = (stage: Stage) => {
    for (const r of stage.redirects) fromWords([r.target]);
    if (stage.kind === "group") return; // its own pipelines are visited as a script
    fromWords(stage.words);
    const inv = invocationOf(stage, vars);
    if (inv === undefined) return;
    if (SHELLS.has(inv.program)) {
      const script = shellCommandString(inv);
      if (script !== undefined) scripts.push(parseShell(script));
      else if (readsScriptFromStdin(inv)) {
        for (const r of inv.redirects) {
          if (r.heredoc !== undefined) scripts.push(parseShell(r.heredoc));
          if (r.op === "<<<") scripts.push(parseShell(r.target.text));
        }
      }
    } else if (inv.program === "eval") {
      scripts.push(parseShell(inv.args.map((w) => w.text).join(" ")));
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

/** The `-c` script of a shell invocation (`bash -c '…'`, `sh -lc '…'`). */
export function shellCommandString(inv: Invocation): string | undefined {
  for (let i = 0; i < inv.args.length; i++) {
    const t = (inv.args[i] as Word).text;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(t)) return inv.args[i + 1]?.text;
    if (!t.startsWith("-") || t === "-" || t === "--") return undefined;
  }
  return undefined;
}

/** Whether a shell or interpreter takes its program from standard input: no `-c`, and `-s`, `-`, or no script operand. */
export function readsScriptFromStdin(inv: Invocation): boolean {
  if (shellCommandString(inv) !== undefined) return false;
  for (const w of inv.args) {
    const t = w.text;
    if (t === "-" || t === "-s" || (t.startsWith("-") && !t.startsWith("--") && t.includes("s") && SHELLS.has(inv.program))) return true;
    if (t === "--") return true;
    if (!t.startsWith("-")) return false;
  }
  return true;
}
