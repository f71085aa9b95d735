/**
 * Host tool names → the CAR tool the built-in inspectors know them as.
 * A host names its tools its own way (Claude Code's shell is `Bash`), and the
 * egress guard keys on CAR's names; without this table a reverse shell sent
 * as `Bash` would pass where the same text sent as `shell` is denied.
 *
 * Only a listed tool can be denied by an inspector. An unlisted tool that
 * carries a `command` or `url` string is still inspected, its findings capped
 * at warn: a guess about an unknown schema is evidence, not grounds to refuse.
 * Operator rules never see this table — they match the host's own names.
 */
import { emptyMap, getOwn, isJsonObject, type JsonObject, type JsonValue, setOwn } from "@car/ir";

export interface ToolMapping {
  host: string;
  car: string;
  /** Parameter keys renamed on the way, as `[host key, CAR key]`. */
  param_aliases: readonly (readonly [string, string])[];
}

const FILE_PATH = [["file_path", "path"]] as const;

const row = (host: string, car: string, param_aliases: ToolMapping["param_aliases"] = []): ToolMapping => Object.freeze({ host, car, param_aliases });

export const TOOL_MAP: readonly ToolMapping[] = Object.freeze([
  // Claude Code.
  row("Bash", "shell"),
  row("WebFetch", "webfetch"),
  row("Read", "read_file", FILE_PATH),
  row("Write", "write_file", FILE_PATH),
  row("Edit", "edit_file", FILE_PATH),
  row("MultiEdit", "edit_file", FILE_PATH),
  row("NotebookEdit", "edit_file", [["notebook_path", "path"]]),
  // Claude Code tools that may carry a command: only a `command` string is read.
  row("BashOutput", "shell"),
  row("Task", "shell"),
  // Codex. Unified exec's `exec_command` names its command line `cmd`.
  row("local_shell", "shell"),
  row("exec_command", "shell", [["cmd", "command"]]),
  // CAR's own vocabulary, inspected under its own names.
  row("shell", "shell"),
  row("http", "http"),
  row("webfetch", "webfetch"),
  row("http_request", "http"),
  row("browser", "webfetch"),
  row("browse_navigate", "webfetch"),
  row("browser_await_signin", "webfetch"),
  row("web_fetch", "webfetch"),
  // A sandbox bridge's exec tools.
  row("run_command", "shell"),
  row("pty_start", "shell"),
]);

/** CAR tools carrying a `command` or `url` string that are deliberately unmapped, each with its reason. */
export const UNMAPPED_CAR_TOOLS: readonly (readonly [string, string])[] = Object.freeze([
  ["skill_find", "its url is a key skills are matched on; nothing is fetched"],
  ["calendar_create_event", "its url is a link stored on the event; nothing is fetched"],
  ["calendar_update_event", "its url is a link stored on the event; nothing is fetched"],
]);

/** The row for a host tool name, matched exactly. */
export function mappingFor(tool: string): ToolMapping | undefined {
  return TOOL_MAP.find((m) => m.host === tool);
}

/** Mapped, or exempted with a reason. */
export function isAccountedFor(tool: string): boolean {
  return mappingFor(tool) !== undefined || UNMAPPED_CAR_TOOLS.some(([t]) => t === tool);
}

/**
 * Tools whose parameter schema declares a string `command` or `url` and that
 * are neither mapped nor exempted. A package defining tools runs its list
 * through this in a test, so a new tool cannot silently miss the guard.
 */
export function unaccountedTools(tools: Iterable<{ name: string; parameters: JsonValue }>): string[] {
  const missing: string[] = [];
  for (const { name, parameters } of tools) {
    if (carriesCommandOrUrl(parameters) && !isAccountedFor(name)) missing.push(name);
  }
  return missing;
}

function carriesCommandOrUrl(schema: JsonValue): boolean {
  const props = isJsonObject(schema) ? getOwn(schema, "properties") : undefined;
  if (!isJsonObject(props)) return false;
  return ["command", "url"].some((k) => {
    const prop = getOwn(props, k);
    return isJsonObject(prop) && getOwn(prop, "type") === "string";
  });
}

/**
 * The call as the inspectors see it: host keys renamed to CAR's. On a
 * collision the host's key wins, because the host runs its own parameter.
 */
export function asCarParams(mapping: ToolMapping, params: JsonValue): JsonObject {
  const source = isJsonObject(params) ? params : {};
  const out: JsonObject = emptyMap();
  for (const k of Object.keys(source)) setOwn(out, k, source[k] as JsonValue);
  for (const [hostKey, carKey] of mapping.param_aliases) {
    const value = getOwn(out, hostKey);
    if (value !== undefined) {
      delete out[hostKey];
      setOwn(out, carKey, value);
    }
  }
  return out;
}

/** For an unmapped tool: the CAR tool its parameters look like, from the two keys the egress guard reads. */
export function inferredCarTool(params: JsonValue): "shell" | "webfetch" | undefined {
  if (!isJsonObject(params)) return undefined;
  if (typeof getOwn(params, "command") === "string") return "shell";
  if (typeof getOwn(params, "url") === "string") return "webfetch";
  return undefined;
}
