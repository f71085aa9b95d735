/**
 * Test-only: the parameter schemas of CAR's built-in tools that the gate's
 * coverage test walks. Kept beside the test because the built-in registry
 * lives in a package above this one; when it lands, its own test should run
 * `unaccountedTools` over the real list too.
 */
import type { JsonObject } from "@car/ir";

const obj = (properties: JsonObject, required: string[] = []): JsonObject => ({ type: "object", properties, required });
const str = { type: "string" };

export const CAR_BUILTIN_TOOL_SCHEMAS: readonly { name: string; parameters: JsonObject }[] = [
  { name: "shell", parameters: obj({ command: str, cwd: str, timeout_ms: { type: "integer" } }, ["command"]) },
  { name: "http_request", parameters: obj({ url: str, method: str, headers: { type: "object" }, body: str }, ["url"]) },
  { name: "browser", parameters: obj({ url: str, action: str }, ["url"]) },
  { name: "web_fetch", parameters: obj({ url: str }, ["url"]) },
  { name: "read_file", parameters: obj({ path: str, limit: { type: "integer" } }, ["path"]) },
  { name: "write_file", parameters: obj({ path: str, content: str }, ["path", "content"]) },
  { name: "edit_file", parameters: obj({ path: str, old: str, new: str }, ["path"]) },
  { name: "list_dir", parameters: obj({ path: str }) },
  { name: "search", parameters: obj({ query: str, path: str }, ["query"]) },
  { name: "skill_find", parameters: obj({ query: str, url: str }) },
  { name: "calendar_create_event", parameters: obj({ title: str, start: str, url: str }, ["title"]) },
  { name: "calendar_update_event", parameters: obj({ id: str, url: str }, ["id"]) },
  { name: "messaging_send", parameters: obj({ channel: str, to: str, body: str }, ["to", "body"]) },
];
