/**
 * What one program invocation asks for, independent of spelling: the
 * subcommand after the program's global options, the flags as a set and the
 * operands. `deny_command` and the tier classifier both read commands
 * through it, so a rule and a tier cannot disagree about `git -C . push -f`.
 *
 * - Global options that take a value (`GLOBAL_OPTIONS`) are skipped with
 *   their value, in any spelling (`-C dir`, `--git-dir=x`, `-nprod`,
 *   `-chdir=x`), and kept in `globals`.
 * - Short clusters split (`-rf` is `-r` and `-f`), `--name=value` reads as
 *   `--name`; Go-style programs (`terraform -auto-approve`) keep a
 *   single-dash word whole.
 * - An option neither table knows (`GLOBAL_SWITCHES` take no value), right before the first operand,
 *   might have taken it as its value: the next operand is then another
 *   reading of the subcommand (`readings`), so an unknown valued option
 *   cannot hide `push`. Readings only add; they never replace.
 */
import type { Invocation } from "./command-position.ts";
import { GLOBAL_OPTIONS, GLOBAL_SWITCHES } from "./program-tables.ts";
import { lexicalPath } from "../../lexical-path.ts";

export interface CommandShape {
  /** The first operand after the global options (`push` of `git -C x push`). */
  subcommand: string | undefined;
  /** Every word that may be the subcommand: `subcommand`, and the next operand when an unknown option came first. */
  readings: string[];
  /** Every flag, short clusters split, `--name=value` as `--name`. */
  flags: Set<string>;
  /** Operands in order (the subcommand first), absolute paths lexically normalised. */
  operands: string[];
  /** Global options with their values, as given before the subcommand (`{ name: "-c", value: "alias.p=push" }`). */
  globals: { name: string; value: string }[];
}

/** Programs whose single-dash options are whole words (`-auto-approve`, `-chdir=x`, `find -delete`). */
const SINGLE_DASH_LONG = new Set(["terraform", "tofu", "packer", "find"]);

export function commandShape(inv: Pick<Invocation, "program" | "args">): CommandShape {
  const words = inv.args.map((w) => w.text);
  const globals = GLOBAL_OPTIONS[inv.program] ?? [];
  const switches = GLOBAL_SWITCHES[inv.program] ?? [];
  const wholeWords = SINGLE_DASH_LONG.has(inv.program);
  const flags = new Set<string>();
  const operands: string[] = [];
  const found: { name: string; value: string }[] = [];
  let subcommand: string | undefined;
  let alternative: string | undefined;
  let options = true;
  /** Whether the word before the first operand was an option this table does not know. */
  let unknownBefore = false;
  let awaitingAlternative = false;
  for (let i = 0; i < words.length; i++) {
    const t = words[i] as string;
    const beforeSubcommand = subcommand === undefined;
    if (options && t === "--") {
      options = false;
      continue;
    }
    if (options && t.startsWith("-") && t.length > 1) {
      const eq = t.indexOf("=");
      const head = eq === -1 ? t : t.slice(0, eq);
      const long = t.startsWith("--") || wholeWords;
      if (beforeSubcommand && globals.includes(head)) {
        flags.add(head);
        found.push({ name: head, value: eq === -1 ? (words[++i] ?? "") : t.slice(eq + 1) });
        unknownBefore = false;
        continue;
      }
      // `-nprod`, `-n=prod`: a known short global with its value attached.
      const attached = t.slice(0, 2);
      if (beforeSubcommand && !long && t.length > 2 && globals.includes(attached)) {
        flags.add(attached);
        found.push({ name: attached, value: t.slice(2).replace(/^=/, "") });
        unknownBefore = false;
        continue;
      }
      if (long || eq > 2) flags.add(head);
      if (!long) for (const letter of head.slice(1)) flags.add(`-${letter}`);
      unknownBefore = beforeSubcommand && globals.length > 0 && eq === -1 && !switches.includes(t);
      continue;
    }
    if (subcommand === undefined) {
      subcommand = t;
      awaitingAlternative = unknownBefore;
    } else if (awaitingAlternative) {
      alternative = t;
      awaitingAlternative = false;
    }
    operands.push(normaliseOperand(t));
  }
  const readings = subcommand === undefined ? [] : alternative === undefined ? [subcommand] : [subcommand, alternative];
  return { subcommand, readings, flags, operands, globals: found };
}

/** Whether the shape holds every entry of `wanted`, each a list of alternatives (`["-r", "-R", "--recursive"]`). */
export function hasFlags(shape: CommandShape, wanted: readonly (readonly string[])[]): boolean {
  return wanted.every((alts) => alts.some((alt) => shape.flags.has(alt)));
}

/** The index of the first word after `program`'s global options (where `docker … run` or `kubectl … exec` stands). */
export function afterGlobalOptions(program: string, words: readonly { text: string }[]): number {
  const globals = GLOBAL_OPTIONS[program] ?? [];
  let i = 0;
  while (i < words.length) {
    const t = (words[i] as { text: string }).text;
    if (!t.startsWith("-") || t === "-" || t === "--") break;
    i += globals.includes(t) ? 2 : 1;
  }
  return i;
}

/** An absolute path operand, lexically normalised (`/*` reaches what its directory holds); anything else as it is. */
export function normaliseOperand(text: string): string {
  if (!text.startsWith("/")) return text;
  const path = lexicalPath(text);
  return path.endsWith("/*") ? lexicalPath(path.slice(0, -1)) : path === "/*" ? "/" : path;
}
