/**
 * The inputs several commands share, loaded the same way everywhere: a
 * proposal (file or `-`), an initial state, and a tool registry for `--tools`.
 */
import { existsSync, statSync } from "node:fs";
import { extname } from "node:path";
import {
  type ActionProposal,
  CarError,
  checkProposalBytes,
  type ProposalLimits,
  isJsonObject,
  type JsonObject,
  type ParsedProposal,
  parseProposalWithGraph,
  parseToolSchema,
  type ToolSchema,
} from "@car/ir";
import { parseJson, readJson, readText } from "./io.ts";

/**
 * Reads and parses a proposal: an unreadable file is `invalid_params`, a
 * malformed proposal `invalid_proposal` (both exit 2). A file over the size
 * limit is refused before it is read; so is stdin over it, before it is parsed.
 */
export async function loadProposal(path: string, limits: ProposalLimits = {}): Promise<ActionProposal> {
  return (await loadParsedProposal(path, limits)).proposal;
}

/**
 * `loadProposal` with the graph parsing built, for a command that verifies and runs it without parsing again.
 * `strict`: a field the spec does not name is refused (`invalid_proposal`, exit 2) instead of kept.
 */
export async function loadParsedProposal(path: string, limits: ProposalLimits = {}, strict = false): Promise<ParsedProposal> {
  if (path !== "-" && existsSync(path)) checkProposalBytes(statSync(path).size, limits);
  const text = await readText(path, "proposal");
  checkProposalBytes(text.length, limits);
  return parseProposalWithGraph(parseJson(text, "proposal", path), { limits, strict });
}

/** A JSON object from a file, for `--state` and similar maps. */
export async function loadJsonObject(path: string, what: string): Promise<JsonObject> {
  const value = await readJson(path, what);
  if (!isJsonObject(value)) throw new CarError("invalid_params", `${what} '${path}' must be a JSON object`);
  return value;
}

/** A registry entry for verify: a bare name, or a schema whose parameters are checked. */
export type ToolSpec = string | ToolSchema;

export const MODULE_EXTENSIONS: ReadonlySet<string> = new Set([".mjs", ".js", ".cjs", ".mts", ".ts"]);

/**
 * Whether a `--tools` value names a file rather than listing tool names. Tool
 * names may hold dots (`db.delete`), so only a known extension, a path
 * separator or an existing file makes it a path.
 */
export function isToolsFile(value: string): boolean {
  const ext = extname(value);
  return ext === ".json" || MODULE_EXTENSIONS.has(ext) || /[\\/]/.test(value) || existsSync(value);
}

/**
 * What `--tools` names for verification. A file: a tools module (its exports,
 * with their schemas), a tools.json map of programs, or a JSON array of names
 * and ToolSchemas. Anything else: comma-separated names, as the original CLI.
 */
export async function loadToolSpecs(value: string): Promise<ToolSpec[]> {
  // Inline JSON (`--tools '["a","b"]'`) would otherwise become one tool named by the whole text.
  if (/^\s*[[{]/.test(value) && !existsSync(value)) {
    let doc: unknown;
    try {
      doc = JSON.parse(value);
    } catch (err) {
      throw new CarError("invalid_params", `--tools is neither a file nor valid inline JSON: ${(err as Error).message}`);
    }
    if (!Array.isArray(doc)) throw new CarError("invalid_params", "inline --tools JSON must be an array of tool names / ToolSchemas");
    return doc.map((entry, i) => toolSpecAt(entry, `--tools[${i}]`));
  }
  if (!isToolsFile(value)) {
    const names = value
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n !== "");
    if (names.length === 0) throw new CarError("invalid_params", "--tools lists no tool names");
    return names;
  }
  if (MODULE_EXTENSIONS.has(extname(value))) {
    const { loadToolModule } = await import("./tools/module-tools.ts");
    return (await loadToolModule(value)).map((t) => t.schema ?? t.name);
  }
  const doc = await readJson(value, "tools file");
  if (Array.isArray(doc)) return doc.map((entry, i) => toolSpecAt(entry, `${value}[${i}]`));
  const { parseProgramTools } = await import("./tools/program-tools.ts");
  return parseProgramTools(doc, value).map((t) => t.schema ?? t.name);
}

function toolSpecAt(entry: unknown, where: string): ToolSpec {
  if (typeof entry === "string") return entry;
  try {
    return parseToolSchema(entry);
  } catch (err) {
    throw new CarError("invalid_params", `${where} is neither a tool name nor a ToolSchema: ${(err as Error).message}`);
  }
}
