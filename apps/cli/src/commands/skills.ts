/**
 * `car skills distill` learns skills from an event-log journal (JSON lines:
 * the runtime's events, as `car audit query --json` prints them, or trace
 * events); `car skills list` shows the skills of a skill file (a server
 * keeps the unscoped skills in `<CAR_HOME>/skills.json`, the global ones in
 * `skills/global.json`, each tenant's in `skills/tenants/`). Distillation is the engine's
 * deterministic one: tool sequences that succeeded at least twice.
 */
import { existsSync, writeFileSync } from "node:fs";
import { CarError, getOwn, isJsonObject, type JsonValue } from "@car/ir";
import type { CarEvent } from "@car/engine";
import { JsonFileSkillStore, distillSkills, traceEventsFrom } from "@car/engine/skills";
import type { SkillRecord } from "@car/engine/skills";
import { expectPositionals, parseArgs, usageError } from "@car/server/argv";
import { println, readText } from "../io.ts";

export const usage = `Usage: car skills distill [-o FILE] <JOURNAL>
       car skills list [-d DOMAIN] [--json] <MEMORY>

distill  Reads JOURNAL (JSON lines; - for stdin): the runtime's events
         (\`car audit query --json\`), whose finished tool actions become the
         trace with each proposal an episode, or trace events
         ({kind, tool, data, reward}). Prints the distilled skills as a JSON
         array, or writes them to FILE with -o/--output.
list     Lists the skills of MEMORY, a skill file (a server's: <CAR_HOME>/skills.json
         unscoped, skills/global.json, skills/tenants/<hex id>.json):
         name, version, status, domain, successes and failures; --domain
         keeps one domain, --json prints the records as a JSON array.`;

export async function main(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "distill") return distill(rest);
  if (sub === "list") return list(rest);
  throw usageError(sub === undefined ? "missing subcommand: distill or list" : `unknown subcommand '${sub}': expected distill or list`);
}

async function distill(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { output: { type: "string", short: "o" } });
  const [journal] = expectPositionals(positionals, ["JOURNAL"]);
  const trace = traceOfJournal(await readText(journal!, "journal"), journal!);
  const skills = distillSkills(trace);
  const text = `${JSON.stringify(skills, null, 2)}\n`;
  if (options.output === undefined) process.stdout.write(text);
  else writeFileSync(options.output, text, "utf8");
  return 0;
}

/** Each line is a trace event (it has `tool` and `reward`) or one of the runtime's events. */
function traceOfJournal(text: string, path: string): unknown[] {
  const trace: unknown[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let value: JsonValue;
    try {
      value = JSON.parse(line) as JsonValue;
    } catch (error) {
      throw new CarError("invalid_params", `${path}:${i + 1}: not JSON: ${(error as Error).message}`);
    }
    if (!isJsonObject(value) || typeof getOwn(value, "kind") !== "string")
      throw new CarError("invalid_params", `${path}:${i + 1}: not an event (an object with a kind)`);
    if (typeof getOwn(value, "tool") === "string" && typeof getOwn(value, "reward") === "number") trace.push(value);
    else if (isJsonObject(getOwn(value, "data") ?? null)) trace.push(...traceEventsFrom([value as unknown as CarEvent]));
    else throw new CarError("invalid_params", `${path}:${i + 1}: an event needs a data object`);
  }
  return trace;
}

async function list(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { domain: { type: "string", short: "d" }, json: { type: "boolean" } });
  const [memory] = expectPositionals(positionals, ["MEMORY"]);
  // The store treats a missing file as empty; a path that names nothing is the caller's mistake here.
  if (!existsSync(memory!)) throw new CarError("invalid_params", `cannot read skill file '${memory}': no such file`);
  const all = new JsonFileSkillStore(memory!).list();
  const skills = options.domain === undefined ? all : all.filter((s) => s.domain === options.domain);
  if (options.json === true) println(JSON.stringify(skills, null, 2));
  else println(table(skills));
  return 0;
}

function table(skills: readonly SkillRecord[]): string {
  if (skills.length === 0) return "no skills";
  const rows = [
    ["NAME", "VERSION", "STATUS", "DOMAIN", "OK", "FAIL"],
    ...skills.map((s) => [
      s.name,
      String(s.version),
      (s.status ?? "active") + (s.broken_for_repair ? " (degraded)" : ""),
      s.domain,
      String(s.stats.success_count),
      String(s.stats.fail_count),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join("  ")).join("\n");
}
