/**
 * Tools from a tools.json that maps each tool to a program, so any
 * executable can be a tool:
 *
 *   { "lint": { "command": ["node", "lint.mjs"], "timeout_ms": 30000, "schema": { ... } },
 *     "fmt": "./bin/fmt" }
 *
 * A string is a program with no arguments. Relative program paths and `cwd`
 * resolve against the tools.json directory, which is also the default working
 * directory. How a program is run lives in `program-runner.ts`.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { CarError, isJsonObject, parseToolSchema, type ToolSchema } from "@car/ir";

export interface ProgramTool {
  name: string;
  schema: ToolSchema | undefined;
  /** Program and arguments. */
  command: string[];
  cwd: string;
  env: Record<string, string>;
  /** Hard limit on one run; the action's own `timeout_ms` may cut it shorter. */
  timeout_ms: number;
}

export const DEFAULT_PROGRAM_TIMEOUT_MS = 60_000;

const KEYS = new Set(["command", "cwd", "env", "timeout_ms", "schema"]);

export function parseProgramTools(doc: unknown, file: string): ProgramTool[] {
  const bad = (message: string) => new CarError("invalid_params", `tools file '${file}': ${message}`);
  if (!isJsonObject(doc)) throw bad("must be a JSON object mapping tool names to programs (or an array of tool names / ToolSchemas)");
  const base = dirname(resolve(file));
  const local = (p: string) => (p.startsWith("./") || p.startsWith("../") ? resolve(base, p) : p);
  const tools: ProgramTool[] = [];
  for (const [name, spec] of Object.entries(doc)) {
    const entry = typeof spec === "string" ? { command: [spec] } : spec;
    if (!isJsonObject(entry)) throw bad(`tool '${name}' must be a program path or { command, ... }`);
    for (const key of Object.keys(entry)) if (!KEYS.has(key)) throw bad(`tool '${name}' has unknown key '${key}'`);
    const raw = typeof entry["command"] === "string" ? [entry["command"]] : entry["command"];
    if (!Array.isArray(raw) || raw.length === 0 || raw.some((c) => typeof c !== "string" || c === "")) {
      throw bad(`tool '${name}'.command must be a program path or a non-empty array of strings`);
    }
    const command = raw as string[];
    command[0] = local(command[0]!);
    const cwdValue = entry["cwd"];
    if (cwdValue !== undefined && typeof cwdValue !== "string") throw bad(`tool '${name}'.cwd must be a string`);
    const env = entry["env"] ?? {};
    if (!isJsonObject(env) || Object.values(env).some((v) => typeof v !== "string")) throw bad(`tool '${name}'.env must map names to strings`);
    const timeout = entry["timeout_ms"] ?? DEFAULT_PROGRAM_TIMEOUT_MS;
    if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) throw bad(`tool '${name}'.timeout_ms must be a positive number`);
    let schema: ToolSchema | undefined;
    if (entry["schema"] !== undefined) {
      if (!isJsonObject(entry["schema"])) throw bad(`tool '${name}'.schema must be an object`);
      try {
        schema = parseToolSchema({ ...entry["schema"], name });
      } catch (err) {
        throw bad(`tool '${name}'.schema is not a valid ToolSchema: ${(err as Error).message}`);
      }
    }
    tools.push({
      name,
      schema,
      command,
      cwd: cwdValue === undefined ? base : isAbsolute(cwdValue) ? cwdValue : resolve(base, cwdValue),
      env: env as Record<string, string>,
      timeout_ms: timeout,
    });
  }
  if (tools.length === 0) throw bad("defines no tools");
  return tools;
}
