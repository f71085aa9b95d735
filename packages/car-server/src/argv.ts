/**
 * A small argv parser, so `car` needs no dependency to read its own command
 * line and every usage mistake becomes one clear `invalid_params` error (exit 2)
 * instead of an option silently ignored.
 *
 * Supports `--name value`, `--name=value`, boolean `--flag` / `--no-flag`,
 * single-letter aliases (`-h`), repeated options when declared `multiple`, a
 * lone `-` as a positional (stdin), and `--` to end option parsing.
 */
import { CarError } from "@car/ir";

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
}

export type OptionSpecs = Record<string, OptionSpec>;

type ValueOf<S extends OptionSpec> = S["type"] extends "boolean" ? boolean : S["multiple"] extends true ? string[] : string;

export interface ParsedArgs<S extends OptionSpecs> {
  positionals: string[];
  options: { [K in keyof S]?: ValueOf<S[K]> };
}

export function usageError(message: string): CarError {
  return new CarError("invalid_params", message);
}

export function parseArgs<S extends OptionSpecs>(args: readonly string[], specs: S): ParsedArgs<S> {
  const positionals: string[] = [];
  const options = new Map<string, string | boolean | string[]>();
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) if (spec.short) byShort.set(spec.short, name);

  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg === "-" || !arg.startsWith("-")) {
      positionals.push(arg);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
    } else {
      const long = byShort.get(arg.slice(1));
      if (long === undefined) throw usageError(`unknown option '${arg}'`);
      name = long;
    }
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
    if (spec === undefined && name.startsWith("no-") && inline === undefined) {
      const positive = name.slice(3);
      const negated = Object.hasOwn(specs, positive) ? specs[positive] : undefined;
      if (negated?.type === "boolean") {
        options.set(positive, false);
        continue;
      }
    }
    if (spec === undefined) throw usageError(`unknown option '--${name}'`);
    if (spec.type === "boolean") {
      if (inline !== undefined) throw usageError(`option '--${name}' takes no value`);
      options.set(name, true);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = args[i + 1];
      if (next === undefined || (next.startsWith("-") && next !== "-")) throw usageError(`option '--${name}' needs a value`);
      value = next;
      i++;
    }
    if (spec.multiple) {
      const list = (options.get(name) as string[] | undefined) ?? [];
      list.push(value);
      options.set(name, list);
    } else {
      if (options.has(name)) throw usageError(`option '--${name}' given more than once`);
      options.set(name, value);
    }
  }
  return { positionals, options: Object.fromEntries(options) as ParsedArgs<S>["options"] };
}

/** Exactly `count` positionals, or a usage error naming what is missing or extra. */
export function expectPositionals(positionals: readonly string[], names: readonly string[]): string[] {
  if (positionals.length < names.length) {
    throw usageError(`missing argument <${names[positionals.length]}>`);
  }
  if (positionals.length > names.length) {
    throw usageError(`unexpected argument '${positionals[names.length]}'`);
  }
  return [...positionals];
}

/** A whole number ≥ 1 given as an option value, or a usage error naming the option. */
export function positiveInteger(value: string, option: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw usageError(`${option} must be a positive integer, got '${value}'`);
  return n;
}
