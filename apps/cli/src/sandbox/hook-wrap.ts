/**
 * The hook's sandbox answer. With `sandbox = true` (or `"required"`) in a
 * policy, a Claude Code `Bash` call the rules let through is answered with
 * `updatedInput`: the same command, run by `car sandbox-exec` inside the OS
 * sandbox, so what the reader misses still cannot reach an unlisted host or
 * write a protected path.
 *
 * The decision that goes with it is `ask`: the host shows the wrapped
 * command and its own permission flow decides. The hook never answers
 * `allow` (DECISIONS §12), and Claude Code applies `updatedInput` only with
 * a decision. Codex takes a rewritten command only with `allow`, so its
 * shell calls are not wrapped: said on stderr, and denied when the sandbox
 * is required.
 */
import { realpathSync } from "node:fs";
import { getOwn, isJsonObject, type JsonObject, type JsonValue } from "@car/ir";
import type { PolicyRules } from "@car/policy";
import { mappingFor } from "@car/policy/gate";
import { sandboxRequest } from "./policy-sandbox.ts";
import { shellQuote } from "./shell-quote.ts";

export type SandboxAnswer = { wrap: JsonObject; reason: string } | { deny: string };

/** Hosts named in a reason before the rest are counted. */
const HOSTS_SHOWN = 4;

/** How the hook answers `tool`/`params` for the sandbox, or `undefined` when no policy asks for one or it is not a shell call. */
export function sandboxAnswer(
  tool: string,
  params: JsonValue,
  cwd: string,
  carHome: string,
  policies: { rules: PolicyRules; dirs: readonly string[] },
  note: (text: string) => void,
): SandboxAnswer | undefined {
  if (mappingFor(tool)?.car !== "shell") return undefined;
  let request: ReturnType<typeof sandboxRequest>;
  try {
    request = sandboxRequest(policies.rules, policies.dirs, cwd, carHome);
  } catch (err) {
    return { deny: `CAR denied ${tool}: the sandbox policy could not be read: ${(err as Error).message}` };
  }
  if (request.mode === "off") return undefined;
  const input = isJsonObject(params) ? params : undefined;
  const command = input === undefined ? undefined : getOwn(input, "command");
  if (tool !== "Bash" || input === undefined || typeof command !== "string") {
    const why = `this ${tool} call cannot be put in the sandbox (the hook rewrites Claude Code's Bash command; Codex takes a rewritten command only with "allow", which this hook never answers)`;
    if (request.mode === "required") return { deny: `CAR denied ${tool}: a policy requires the sandbox, and ${why}` };
    note(`${why}; it runs judged by the policy rules alone`);
    return undefined;
  }
  const car = shellQuote([process.execPath, ...process.execArgv, realPath(process.argv[1] ?? "car")]);
  const fallback = request.mode === "on" ? "--if-available " : "";
  const hosts = request.settings.network.allowedDomains.filter((d) => !d.startsWith("*."));
  const shown =
    hosts.length === 0 ? "no host" : hosts.slice(0, HOSTS_SHOWN).join(", ") + (hosts.length > HOSTS_SHOWN ? ` and ${hosts.length - HOSTS_SHOWN} more` : "");
  return {
    wrap: { ...input, command: `${car} sandbox-exec ${fallback}-c ${shellQuote([command])}` },
    reason:
      `CAR runs this command in its OS sandbox (car sandbox-exec): network only to ${shown} (with subdomains), ` +
      `writes only in the workspace and the temp directory, ${request.settings.filesystem.denyWrite.length} protected path(s) read-only` +
      (request.mode === "on" ? "; where the sandbox cannot start it says so and runs the command without it" : ""),
  };
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
