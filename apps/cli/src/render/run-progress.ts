/**
 * What `car run` shows a person while a proposal executes — one line per
 * action event as the runtime emits it — and the summary of the
 * ProposalResult at the end.
 */
import type { JsonObject, ProposalResult } from "@car/ir";
import type { Colors } from "./color.ts";

/** The fields of an engine event this view reads. */
export interface ProgressEvent {
  kind: string;
  action_id?: string;
  data: JsonObject;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Names an error text once: the first action with it shows it, a later one
 * with the same text says `same as <first>` — four copies of one approval
 * finding (its 64-digit fingerprint included) are read once, not four times.
 */
export class ShownOnce {
  readonly #first = new Map<string, string>();

  text(actionId: string, error: string): string {
    const first = this.#first.get(error);
    if (first === undefined) {
      this.#first.set(error, actionId);
      return error;
    }
    return first === actionId ? error : `same as ${first}`;
  }
}

/** One progress line for an event, or `undefined` for events not worth a line. `shown` dedupes repeated rejection reasons. */
export function progressLine(event: ProgressEvent, c: Colors, tools: ReadonlyMap<string, string>, shown?: ShownOnce): string | undefined {
  const id = event.action_id ?? "";
  const label = tools.get(id);
  const name = label === undefined ? c.bold(id) : `${c.bold(id)} ${c.dim(`(${label})`)}`;
  switch (event.kind) {
    case "action_started":
      return `${c.cyan("▶")} ${name}`;
    case "action_retrying":
      return `${c.yellow("↻")} ${name} retry ${text(event.data["attempt"])} in ${text(event.data["delay_ms"])} ms${event.data["error"] ? `: ${text(event.data["error"])}` : ""}`;
    case "action_waiting":
      return `${c.dim("⏸")} ${name} waiting ${text(event.data["wait_ms"])} ms (${String(event.data["reason"]).replace("_", " ")})`;
    case "policy_violation":
      return `${c.red("⛔")} ${name} denied by policy ${c.bold(text(event.data["policy_name"]))}: ${text(event.data["reason"])}`;
    case "approval_requested":
      return `${c.dim("⏸")} ${name} waiting for approval (requires ${text(event.data["required"])}, granted ${text(event.data["granted"])})`;
    case "approval_decided": {
      // After a wait (`approval_requested`), the answer closes it, whatever it is.
      const after = event.data["wait_ms"] === undefined ? "" : ` by ${text(event.data["reviewer"])} after ${text(event.data["wait_ms"])} ms`;
      if (event.data["decision"] === "allow") return after === "" ? undefined : `${c.green("✔")} ${name} approved${after}`;
      return `${c.red("⛔")} ${name} not approved${after} (requires ${text(event.data["required"])}, granted ${text(event.data["granted"])})`;
    }
    case "action_succeeded":
      return `${c.green("✓")} ${name}${event.data["cached"] === true ? c.dim(" (cached)") : ""}`;
    case "action_failed":
      return `${c.red("✗")} ${name} ${c.red(text(event.data["error"]))}${event.data["terminal"] === true ? c.red(" [terminal]") : ""}`;
    case "action_rejected":
      return `${c.red("⊘")} ${name} rejected: ${shown === undefined ? text(event.data["reason"]) : shown.text(id, text(event.data["reason"]))}`;
    case "action_skipped":
      return `${c.yellow("↷")} ${name} skipped${event.data["reason"] !== undefined ? `: ${text(event.data["reason"])}` : ""}`;
    case "proposal_rolled_back":
      return `${c.yellow("↺")} rolled back: ${text(event.data["reason"])}`;
    case "compensation_started":
      return `${c.cyan("↶")} ${name} compensating${event.data["tool"] !== null && event.data["tool"] !== undefined ? ` with ${text(event.data["tool"])}` : ""}`;
    case "compensation_succeeded":
      return `${c.green("↶")} ${name} compensated`;
    case "compensation_failed":
      return `${c.red("↶")} ${name} compensation failed: ${c.red(text(event.data["error"]))}${event.data["terminal"] === true ? c.red(" [terminal]") : ""}`;
    default:
      return undefined;
  }
}

export function resultSummary(result: ProposalResult, c: Colors): string {
  const paint: Record<string, (s: string) => string> = { succeeded: c.green, failed: c.red, rejected: c.red, skipped: c.yellow };
  const width = Math.max(6, ...result.results.map((r) => r.action_id.length));
  const lines = [c.bold(`proposal ${result.proposal_id}`)];
  const shown = new ShownOnce();
  for (const r of result.results) {
    const status = (paint[r.status] ?? ((s: string) => s))(r.status.padEnd(9));
    const flags = [
      r.rolled_back ? "rolled back" : "",
      r.compensated ? "compensated" : "",
      r.compensation_error !== undefined ? "not undone" : "",
      r.terminal ? "terminal" : "",
    ].filter((f) => f !== "");
    const detail =
      r.status === "succeeded" && !r.rolled_back
        ? c.dim(JSON.stringify(r.output))
        : r.error === undefined || r.error === null
          ? ""
          : shown.text(r.action_id, r.error);
    lines.push(
      `  ${r.action_id.padEnd(width)}  ${status} ${c.dim(`${Math.round(r.duration_ms)} ms`.padStart(7))}  ${flags.length > 0 ? c.yellow(`[${flags.join(", ")}] `) : ""}${detail}`,
    );
  }
  const k = result.cost;
  lines.push(
    c.dim(
      `  ${k.actions_executed} executed, ${k.actions_rejected} rejected, ${k.actions_skipped} skipped; ${k.tool_calls} tool call${k.tool_calls === 1 ? "" : "s"}, ${k.retries} retr${k.retries === 1 ? "y" : "ies"}, ${Math.round(k.total_duration_ms)} ms`,
    ),
  );
  return lines.join("\n");
}
