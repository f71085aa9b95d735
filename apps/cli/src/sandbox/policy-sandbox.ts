/**
 * What the policy files ask of the sandbox, for one working directory: the
 * mode (`off`, `on`, `required`) and sandbox-runtime's settings. Shared by
 * `car run`, `car sandbox-exec` and the hook, so the three draw one boundary.
 */
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { realpathSync } from "node:fs";
// The gate entry, not the package index: the hook loads this on every call.
import { loadPolicyDir, PolicyRules, type SandboxMode, type SandboxSettings, sandboxMode, sandboxSettings } from "@car/policy/gate";

export type SandboxRequest = { mode: "off" } | { mode: Exclude<SandboxMode, "off">; settings: SandboxSettings };

/** Every rule in `dirs`, merged; a file that does not load throws its `PolicyLoadError`. */
export function loadRules(dirs: readonly string[]): PolicyRules {
  const merged = new PolicyRules();
  for (const dir of dirs) merged.merge(loadPolicyDir(dir));
  return merged;
}

/** The mode `rules` (the policy files of `dirs`) ask for, and the settings when they ask (computed only then: the hook runs this on every shell call). */
export function sandboxRequest(rules: PolicyRules, dirs: readonly string[], cwd: string, carHome: string): SandboxRequest {
  const mode = sandboxMode(rules);
  return mode === "off" ? { mode } : { mode, settings: sandboxSettingsFor(rules, dirs, cwd, carHome) };
}

/** The settings for `rules`, with the runner's own files protected. */
export function sandboxSettingsFor(rules: PolicyRules, dirs: readonly string[], cwd: string, carHome: string): SandboxSettings {
  return sandboxSettings(rules, { cwd, policyDirs: dirs, carHome, runnerPaths: runnerPaths() });
}

/**
 * The files that start the next sandboxed command: car's own (the directory
 * of the entry that is running) and sandbox-runtime's package. A command
 * that could rewrite them would run unconfined next time.
 */
function runnerPaths(): string[] {
  const paths: string[] = [];
  const entry = process.argv[1];
  if (entry !== undefined) paths.push(dirname(realPath(entry)));
  try {
    paths.push(dirname(createRequire(import.meta.url).resolve("@anthropic-ai/sandbox-runtime/package.json")));
  } catch {
    // Not installed: the sandbox will not start, and says so.
  }
  return paths;
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
