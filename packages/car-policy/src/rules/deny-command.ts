/**
 * `deny_command`: a rule on what a shell command does, not how it is spelled.
 * The command parameter is read with the egress guard's shell reader, so the
 * rule sees every program the line runs (through `sudo`, `bash -c`, `$( )`,
 * pipelines), with quotes, escapes and ANSI-C strings decoded. A program
 * matches by its file name in any case or path; flags form a set, with short
 * clusters split (`-rf` is `-r` and `-f`) and `--name=value` read as
 * `--name`; each `flags` entry lists alternatives with `|`
 * (`"-f|--force|+refspec"`), where `+refspec` matches an operand beginning
 * with `+` (git's force refspec); every entry must hold. `args` are operands
 * that must all appear, paths compared after lexical normalisation (`//`,
 * `/.`, `/./` are `/`; `/*` reaches `/`). The reading itself is
 * `commandShape`'s, which the tier classifier shares.
 */
import { getOwn, type JsonValue } from "@car/ir";
import type { PolicyRule } from "../engine.ts";
import { invocationsOf } from "../inspectors/egress/command-position.ts";
import { commandShape, normaliseOperand } from "../inspectors/egress/command-shape.ts";
import { programFamily } from "../inspectors/egress/program-tables.ts";

export interface DenyCommandSpec {
  program: string;
  /** The first operand (`push` of `git push`), after the program's global options. */
  subcommand?: string;
  /** Every entry must be present; an entry's `|`-separated alternatives are any-of. */
  flags?: string[];
  /** Operands that must all appear. */
  args?: string[];
  /** Only calls to this tool; default any tool. */
  tool?: string;
  /** The parameter holding the command line; default `command`. */
  param?: string;
}

export function denyCommandRuleName(spec: DenyCommandSpec): string {
  return `deny_command:${spec.program}${spec.subcommand !== undefined ? ` ${spec.subcommand}` : ""}`;
}

/** Problems in a spec that would make it never match, for `car policy lint`. */
export function denyCommandProblems(spec: DenyCommandSpec): string[] {
  const problems: string[] = [];
  if (spec.program.trim() === "") problems.push("program is empty");
  if (/\s/.test(spec.program)) problems.push(`program '${spec.program}' contains whitespace; put the subcommand in 'subcommand'`);
  for (const entry of spec.flags ?? []) {
    for (const alt of entry.split("|")) {
      if (alt !== "+refspec" && !/^--?[^-\s]/.test(alt)) problems.push(`flag '${alt}' must start with - or --, or be +refspec`);
      if (/^-[^-]./.test(alt)) problems.push(`flag '${alt}' is a cluster; list each short flag on its own ('-r', '-f')`);
    }
  }
  return problems;
}

export function denyCommandRule(spec: DenyCommandSpec, name = denyCommandRuleName(spec)): PolicyRule {
  const program = programFamily(spec.program);
  const param = spec.param ?? "command";
  const wanted = (spec.flags ?? []).map((entry) => entry.split("|"));
  const args = (spec.args ?? []).map(normaliseOperand);
  const described = [spec.subcommand, ...(spec.flags ?? []), ...(spec.args ?? [])].filter((p) => p !== undefined).join(" ");
  const reason = `runs '${spec.program}${described ? ` ${described}` : ""}', which a deny_command rule denied in any spelling`;
  return {
    name,
    ...(spec.tool !== undefined ? { tool: spec.tool } : {}),
    evaluate(action, _state, context) {
      if (spec.tool !== undefined && action.tool !== spec.tool) return undefined;
      const text = context.paramString(param);
      if (text === undefined) return undefined;
      for (const inv of invocationsOf(commandText(getOwn(action.parameters, param) as JsonValue, text))) {
        if (inv.program !== program) continue;
        const shape = commandShape(inv);
        if (spec.subcommand !== undefined && !shape.readings.includes(spec.subcommand)) continue;
        if (!wanted.every((alts) => alts.some((alt) => (alt === "+refspec" ? shape.operands.some((o) => o.startsWith("+")) : shape.flags.has(alt))))) continue;
        if (!args.every((a) => shape.operands.some((o) => o === a))) continue;
        return reason;
      }
      return undefined;
    },
  };
}

/** A command parameter as text: a string as it is, an argv array (Codex) as the command line it runs. */
function commandText(value: JsonValue, text: string): string {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? argvToCommand(value as string[]) : text;
}

/**
 * The shell command an argv array runs: `["bash", "-lc", X]` runs `X`;
 * anything else is its words, each single-quoted.
 */
export function argvToCommand(argv: readonly string[]): string {
  // `["bash", "-c", X]`, and `["bash", "-c", "--", X]`: `--` ends the options and X is still the script.
  const [program, flag, ...rest] = argv;
  const script = rest.length === 2 && rest[0] === "--" ? rest[1] : rest.length === 1 ? rest[0] : undefined;
  if (script !== undefined && program !== undefined && /^(\/.*\/)?(ba|z|da|k)?sh$/.test(program) && flag !== undefined && /^-[a-z]*c[a-z]*$/.test(flag)) {
    return script;
  }
  return argv.map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(" ");
}
