/**
 * `car policy-check-hook`: a Claude Code / Codex `PreToolUse` hook.
 *
 * Hosts run it before every tool call, so it is its own small entry that loads
 * only the policy gate. The contract (DECISIONS.md §12, §23):
 * - a rule that denies, or a policy file that will not load, prints the host's
 *   deny envelope naming the rule or the file;
 * - a shell command the gate cannot prove safe prints Claude Code's `ask`
 *   envelope with the reasons. Codex's PreToolUse hook acts on `deny` only
 *   (it does not implement `ask`), so for Codex the nearest answer is a deny
 *   that says it is a question for the user;
 * - a Bash call a policy wants sandboxed (`sandbox = true`) prints `ask` with
 *   the command wrapped in `car sandbox-exec` (src/sandbox/hook-wrap.ts);
 * - anything else prints nothing — never `allow`, which would skip the user's
 *   own permission prompt, since policies can only ever narrow;
 * - a payload it cannot read fails open, with a note on stderr;
 * - the exit code is always 0, so the decision travels only in stdout.
 */
import { readFileSync, writeSync } from "node:fs";
import type { JsonValue } from "@car/ir";
import { type Finding, type LoadedPolicies, loadPolicies, type PolicyCheckResult, policyCheckDirs, policyDirs } from "@car/policy/gate";
import { resolveCarHome } from "@car/server/car-home";
import { type SandboxAnswer, sandboxAnswer } from "./sandbox/hook-wrap.ts";

export const usage = `Usage: car policy-check-hook

Reads a Claude Code or Codex PreToolUse payload on stdin and, when a CAR
policy denies the call, prints the host's deny envelope on stdout:
  {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",...}}
When the gate cannot prove a shell command safe (and the policy's unproven
setting is "ask", the default) it prints Claude Code's "ask" envelope; Codex
has no ask, so it gets a deny saying the command needs the user's approval.
Otherwise it prints nothing and the host's own permission flow decides.

With sandbox = true (or "required") in a policy, a Bash call the rules let
through is answered "ask" with updatedInput: the same command run by
'car sandbox-exec' inside the OS sandbox (network only to the allowed hosts,
no writes to protected paths). Shell calls that cannot be rewritten (Codex)
are noted on stderr, or denied when the sandbox is required.

Policies: <CAR_HOME>/policies, then every .car/policies from the repository
root down to the payload's cwd. A policy file that does not load denies; a
payload that cannot be read fails open with a note on stderr. Exits 0 always.

'car init' writes the hook command for you: the absolute paths of node and
car, so a car missing from PATH cannot turn the hook into a no-op.`;

interface PreToolUsePayload {
  tool: string;
  params: JsonValue;
  cwd: string;
  event: string;
  /** Codex sends `turn_id` and `model`; Claude Code sends neither in PreToolUse. */
  codex: boolean;
}

/** What the hook tells the host: a denial, or a question for the user. */
interface HookAnswer {
  decision: "deny" | "ask";
  reason: string;
}

export async function main(): Promise<number> {
  const payload = readPayload(await readAll());
  if (typeof payload === "string") {
    note(`${payload}; no decision made (failing open)`);
    return 0;
  }
  const policies = readPolicies(payload);
  const gate = "deny" in policies ? { decision: "deny" as const, reason: policies.deny } : hookAnswer(payload, policies);
  // A call the gate does not deny may still have to run in the OS sandbox (src/sandbox/hook-wrap.ts).
  const sandbox = gate?.decision === "deny" || "deny" in policies ? undefined : sandboxFor(payload, policies);
  if (gate?.decision === "deny") {
    answer({ hookEventName: payload.event, permissionDecision: "deny", permissionDecisionReason: gate.reason });
  } else if (sandbox !== undefined && "deny" in sandbox) {
    answer({ hookEventName: payload.event, permissionDecision: "deny", permissionDecisionReason: sandbox.deny });
  } else if (sandbox !== undefined && "wrap" in sandbox) {
    // One question carrying both reasons when the gate also asks; the command runs wrapped either way.
    const reason = gate === undefined ? sandbox.reason : `${gate.reason}; ${sandbox.reason}`;
    answer({ hookEventName: payload.event, permissionDecision: "ask", permissionDecisionReason: reason, updatedInput: sandbox.wrap });
  } else if (gate !== undefined) {
    // Codex does not implement `ask` for PreToolUse: the nearest it offers is a deny whose reason says so.
    const codexAsk = payload.codex;
    const reason = codexAsk
      ? `${gate.reason}. Codex's hook cannot ask, so CAR denies it: ask the user to approve and run it, or set unproven = "allow" in a .car/policies file`
      : gate.reason;
    answer({ hookEventName: payload.event, permissionDecision: codexAsk ? "deny" : "ask", permissionDecisionReason: reason });
  }
  return 0;
}

function answer(hookSpecificOutput: Record<string, unknown>): void {
  try {
    writeSync(1, `${JSON.stringify({ hookSpecificOutput })}\n`);
  } catch {
    // The host stopped reading; there is no one left to tell, and the exit code must stay 0.
  }
}

/** Where the policies are and what they say, read once for both the gate and the sandbox. */
interface HookPolicies {
  carHome: string;
  dirs: string[];
  loaded: LoadedPolicies;
}

function readPolicies(payload: PreToolUsePayload): HookPolicies | { deny: string } {
  let carHome: string;
  try {
    carHome = resolveCarHome();
  } catch (err) {
    // The operator's machine-wide rules cannot be located: failing open would
    // skip them silently, which is the failure a policy hook exists to prevent.
    return { deny: `CAR policy check could not run: ${(err as Error).message}` };
  }
  try {
    const dirs = policyDirs(payload.cwd, { carHome });
    return { carHome, dirs, loaded: loadPolicies(dirs) };
  } catch (err) {
    return { deny: `CAR policy check failed: ${(err as Error).message}` };
  }
}

function sandboxFor(payload: PreToolUsePayload, policies: HookPolicies): SandboxAnswer | undefined {
  try {
    return sandboxAnswer(payload.tool, payload.params, payload.cwd, policies.carHome, { rules: policies.loaded.merged, dirs: policies.dirs }, note);
  } catch (err) {
    return { deny: `CAR policy check failed: ${(err as Error).message}` };
  }
}

/** A line on stderr; a closed stderr is not worth failing the hook over. */
function note(text: string): void {
  try {
    writeSync(2, `car policy-check-hook: ${text}\n`);
  } catch {
    // Nothing to do: the note is advisory.
  }
}

/**
 * All of stdin. Read synchronously from fd 0 (and written with `writeSync`)
 * because setting up `process.stdin` / `process.stdout` streams costs more
 * than the whole policy check; the stream is the fallback for a non-blocking
 * stdin that refuses a synchronous read.
 */
async function readAll(): Promise<string> {
  try {
    return readFileSync(0, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EAGAIN") return "";
  }
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  } catch {
    return "";
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The payload's fields, or why it cannot be read. */
function readPayload(raw: string): PreToolUsePayload | string {
  // A UTF-8 byte-order mark is not part of the JSON; JSON.parse would refuse it and the hook would fail open.
  const text = raw.startsWith("\uFEFF") ? raw.slice(1) : raw;
  if (text.trim() === "") return "empty payload on stdin";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `the payload is not JSON (${(err as Error).message})`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "the payload is not a JSON object";
  const record = value as Record<string, unknown>;
  const tool = record["tool_name"];
  if (typeof tool !== "string" || tool === "") return "the payload has no tool_name";
  const cwd = typeof record["cwd"] === "string" && record["cwd"] !== "" ? record["cwd"] : process.cwd();
  const event = typeof record["hook_event_name"] === "string" ? record["hook_event_name"] : "PreToolUse";
  const codex = typeof record["turn_id"] === "string" || typeof record["model"] === "string";
  return { tool, params: (record["tool_input"] ?? {}) as JsonValue, cwd, event, codex };
}

/** The hook's answer, or `undefined` when CAR makes no decision. */
function hookAnswer(payload: PreToolUsePayload, policies: HookPolicies): HookAnswer | undefined {
  let decision: PolicyCheckResult;
  try {
    decision = policyCheckDirs(payload.tool, payload.params, policies.dirs, payload.cwd, policies.loaded);
  } catch (err) {
    // The gate answers every input with a document; a throw is a defect, and
    // letting calls through unchecked would hide it.
    return { decision: "deny", reason: `CAR policy check failed: ${(err as Error).message}` };
  }
  const findings: Finding[] = decision.findings;
  for (const w of findings.filter((f) => f.severity === "warn")) note(`warning (${w.rule}): ${w.reason}`);
  if (decision.basis === "policy_load_failed") {
    const errors = decision.load_errors.map((e) => e.error).join("; ");
    return { decision: "deny", reason: `CAR denied ${payload.tool}: a policy file could not be loaded, so every call is denied until it is fixed: ${errors}` };
  }
  if (decision.answer === "none") return undefined;
  const shown = findings.filter((f) => f.severity === decision.answer);
  const verb = decision.answer === "deny" ? "CAR policy denied" : "CAR asks before";
  return { decision: decision.answer, reason: `${verb} ${payload.tool}: ${shown.map((f) => `${f.rule} (${f.source}): ${f.reason}`).join("; ")}` };
}
