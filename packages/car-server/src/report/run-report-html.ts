/**
 * A run drawn for a person, from its audit events alone — so `car run
 * --report` and `car audit report` (a proposal read back from the database)
 * draw the same page. One row per action on a shared time axis: a bar from
 * start to finish coloured by final status, ticks for retries, a pale
 * segment for each wait (blue: rate limit; violet: the approval gate waiting
 * for its approver, from `approval_requested` to the `approval_decided` that
 * closes it, with who decided), a ⛔ for a policy or approval denial, the
 * rollback as a banner and hatched bars, and the cost summary. One
 * self-contained page: inline CSS and SVG, no scripts, nothing fetched, and
 * no `style` attribute — its one stylesheet is `RUN_REPORT_CSS`, so a page
 * that frames the report (the operator console) can allow exactly that
 * stylesheet by its hash in a strict Content-Security-Policy.
 */
import { getOwn, type JsonObject, type JsonValue } from "@car/ir";
import { escapeHtml } from "./escape-html.ts";

/** The fields of an audit event the report reads. */
export interface ReportEvent {
  kind: string;
  action_id?: string;
  timestamp: string;
  data: JsonObject;
}

export type RowStatus = "succeeded" | "failed" | "rejected" | "skipped" | "running";

export interface TimelineRow {
  id: string;
  label: string;
  status: RowStatus;
  /** Milliseconds from the proposal's first event. */
  start: number | undefined;
  end: number | undefined;
  retries: { at: number; attempt: number; error: string }[];
  waits: Wait[];
  denials: string[];
  error: string | undefined;
}

/** A wait before dispatch: a rate limit (`rate_limit`), or the approval gate asking its approver (`approval`). */
export interface Wait {
  at: number;
  ms: number;
  reason: string;
  /** Approval waits: the decision (`allow`, `deny`, …), or `pending` when the log holds no answer. */
  decision?: string;
  /** Approval waits: who decided (a reviewer, `timeout`, `approver`). */
  reviewer?: string;
}

export interface RunTimeline {
  proposalId: string;
  rows: TimelineRow[];
  /** Length of the run, ms. */
  span: number;
  rolledBack: string | undefined;
  outcome: string | undefined;
  cost: JsonObject | undefined;
}

const FINAL: Readonly<Record<string, RowStatus>> = {
  action_succeeded: "succeeded",
  action_failed: "failed",
  action_rejected: "rejected",
  action_skipped: "skipped",
};

const str = (v: JsonValue | undefined): string => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v));

/** One row per action of the received proposal, in its order (approval waits at admission come before any action starts). */
function rowsInPlanOrder(proposal: JsonValue | undefined, row: (id: string) => TimelineRow): void {
  const actions = proposal !== null && typeof proposal === "object" && !Array.isArray(proposal) ? getOwn(proposal, "actions") : undefined;
  if (!Array.isArray(actions)) return;
  for (const a of actions) {
    if (a === null || typeof a !== "object" || Array.isArray(a)) continue;
    const id = getOwn(a, "id");
    if (typeof id !== "string") continue;
    const label = getOwn(a, "tool") ?? getOwn(a, "type");
    row(id).label = typeof label === "string" ? label : id;
  }
}

/**
 * The timeline of one proposal's events (in log order). `outcome`, when
 * given, is the run report's (`RunReport.outcome`): it wins over the log's
 * last word, which a refused commit may have taken back.
 */
export function runTimeline(proposalId: string, events: readonly ReportEvent[], outcome?: string): RunTimeline {
  const t0 = events.length > 0 ? Date.parse(events[0]!.timestamp) : 0;
  const at = (e: ReportEvent) => Date.parse(e.timestamp) - t0;
  const rows = new Map<string, TimelineRow>();
  const row = (id: string): TimelineRow => {
    let r = rows.get(id);
    if (r === undefined)
      rows.set(id, (r = { id, label: id, status: "running", start: undefined, end: undefined, retries: [], waits: [], denials: [], error: undefined }));
    return r;
  };
  let rolledBack: string | undefined;
  let completed: string | undefined;
  let cost: JsonObject | undefined;
  let span = 0;
  /** Approval waits opened by `approval_requested` and not yet closed, by action. */
  const asking = new Map<string, Wait>();
  for (const e of events) {
    span = Math.max(span, at(e));
    if (e.kind === "proposal_received") rowsInPlanOrder(getOwn(e.data, "proposal"), row);
    if (e.kind === "proposal_rolled_back") rolledBack = str(getOwn(e.data, "reason"));
    if (e.kind === "proposal_completed") {
      completed = str(getOwn(e.data, "outcome"));
      const c = getOwn(e.data, "cost");
      if (c !== null && typeof c === "object" && !Array.isArray(c)) cost = c;
    }
    if (e.action_id === undefined) continue;
    const r = row(e.action_id);
    const tool = getOwn(e.data, "tool");
    if (typeof tool === "string") r.label = tool;
    else if (e.kind === "action_started" && typeof getOwn(e.data, "type") === "string") r.label = str(getOwn(e.data, "type"));
    switch (e.kind) {
      case "action_started":
        r.start ??= at(e);
        break;
      case "action_retrying":
        r.retries.push({ at: at(e), attempt: Number(getOwn(e.data, "attempt") ?? 0), error: str(getOwn(e.data, "error")) });
        break;
      case "action_waiting":
        r.start ??= at(e);
        r.waits.push({ at: at(e), ms: Number(getOwn(e.data, "wait_ms") ?? 0), reason: str(getOwn(e.data, "reason")) });
        break;
      case "policy_violation":
        r.denials.push(`policy ${str(getOwn(e.data, "policy_name"))}: ${str(getOwn(e.data, "reason"))}`);
        break;
      case "approval_requested": {
        const wait: Wait = { at: at(e), ms: 0, reason: "approval", decision: "pending" };
        r.waits.push(wait);
        asking.set(r.id, wait);
        break;
      }
      case "approval_decided": {
        const wait = asking.get(r.id);
        if (wait !== undefined) {
          asking.delete(r.id);
          const waited = getOwn(e.data, "wait_ms");
          wait.ms = typeof waited === "number" ? waited : at(e) - wait.at;
          wait.decision = str(getOwn(e.data, "decision"));
          wait.reviewer = str(getOwn(e.data, "reviewer"));
        }
        if (getOwn(e.data, "decision") !== "allow")
          r.denials.push(`approval: requires ${str(getOwn(e.data, "required"))}, granted ${str(getOwn(e.data, "granted"))}`);
        break;
      }
      default: {
        const status = FINAL[e.kind];
        if (status === undefined) break;
        r.status = status;
        r.end = at(e);
        const why = getOwn(e.data, "error") ?? getOwn(e.data, "reason");
        if (why !== undefined) r.error = str(why);
      }
    }
  }
  // A question the log holds no answer to was still open when the log ends.
  for (const wait of asking.values()) wait.ms = span - wait.at;
  return { proposalId, rows: [...rows.values()], span: Math.max(span, 1), rolledBack, outcome: outcome ?? completed, cost };
}

/** The report's one stylesheet (the swatch colours repeat COLOR and WAIT_COLOR, which the SVG bars use as attributes). */
export const RUN_REPORT_CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #111827; background: #fafafa; }
h1 { font-size: 20px; margin: 0 0 6px; }
.outcome { font-weight: 600; padding: 2px 8px; border-radius: 6px; background: #e5e7eb; }
.outcome.committed { background: #dcfce7; color: #166534; }
.outcome.rolled_back, .outcome.rejected, .outcome.refused { background: #fee2e2; color: #991b1b; }
.banner { background: #fef3c7; border: 1px solid #d97706; padding: 8px 12px; border-radius: 8px; margin: 10px 0; }
.timeline { background: #fff; border: 1px solid #e5e7eb; border-radius: 10px; overflow: auto; margin: 14px 0; }
svg text.name { font: 600 12px ui-monospace, SFMono-Regular, Menlo, monospace; fill: #111827; }
svg tspan.tool { font-weight: 400; fill: #6b7280; }
svg text.ms, svg text.axis { font-size: 11px; fill: #4b5563; }
svg text.denial { font-size: 13px; }
svg text.wait-label { font-size: 10px; fill: #3b0764; }
svg line.tick { stroke: #e5e7eb; }
table { border-collapse: collapse; background: #fff; margin-bottom: 16px; }
th, td { text-align: left; padding: 5px 10px; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
tr.failed td.status, tr.rejected td.status { color: #b91c1c; font-weight: 600; }
tr.succeeded td.status { color: #15803d; }
tr.skipped td.status { color: #b45309; }
.legend span { margin-right: 14px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px; vertical-align: -1px; margin-right: 4px; }
.swatch.succeeded { background: #16a34a; }
.swatch.failed { background: #dc2626; }
.swatch.rejected { background: #7f1d1d; }
.swatch.skipped { background: #d97706; }
.swatch.rate_limit { background: #93c5fd; }
.swatch.approval { background: #c4b5fd; }
`;

const COLOR: Record<RowStatus, string> = { succeeded: "#16a34a", failed: "#dc2626", rejected: "#7f1d1d", skipped: "#d97706", running: "#6b7280" };
const WAIT_COLOR = { rate_limit: "#93c5fd", approval: "#c4b5fd" };

/** What a wait was and how it ended, in words. */
function waitText(w: Wait): string {
  if (w.reason !== "approval") return `waited ${w.ms} ms (${w.reason})`;
  if (w.decision === "pending") return `waiting for approval: no answer recorded (${w.ms} ms so far)`;
  return `waited ${w.ms} ms for approval: ${w.decision}, decided by ${w.reviewer}`;
}
const LEFT = 220;
const WIDTH = 760;
const ROW_H = 28;
const TOP = 30;

function rowSvg(r: TimelineRow, i: number, scale: (ms: number) => number, rolledBack: boolean): string {
  const y = TOP + i * ROW_H;
  const parts = [
    `<g class="row ${r.status}${rolledBack && r.status === "succeeded" ? " rolled-back" : ""}" data-action-id="${escapeHtml(r.id)}" data-status="${r.status}">`,
  ];
  parts.push(
    `<text class="name" x="8" y="${y + 17}">${escapeHtml(r.id.length > 18 ? `${r.id.slice(0, 17)}…` : r.id)} <tspan class="tool">${escapeHtml(r.label)}</tspan></text>`,
  );
  const x1 = scale(r.start ?? r.end ?? 0);
  const x2 = Math.max(x1 + 3, scale(r.end ?? r.start ?? 0));
  const duration = r.start !== undefined && r.end !== undefined ? r.end - r.start : undefined;
  const tip = [`${r.id} (${r.label}): ${r.status}`, duration !== undefined ? `${duration} ms` : "", r.error ?? "", ...r.denials]
    .filter((s) => s !== "")
    .join("\n");
  parts.push(
    `<rect class="bar" x="${x1}" y="${y + 5}" width="${x2 - x1}" height="${ROW_H - 10}" rx="3" fill="${COLOR[r.status]}"${rolledBack && r.status === "succeeded" ? ' fill-opacity="0.45" stroke="#111827" stroke-dasharray="4 3"' : ""}><title>${escapeHtml(tip)}</title></rect>`,
  );
  for (const w of r.waits) {
    const approval = w.reason === "approval";
    const about = approval ? ` data-decision="${escapeHtml(w.decision ?? "")}" data-reviewer="${escapeHtml(w.reviewer ?? "")}"` : "";
    const x = scale(w.at);
    const width = Math.max(2, scale(w.at + w.ms) - x);
    parts.push(
      `<rect class="wait${approval ? " approval" : ""}" data-reason="${escapeHtml(w.reason)}" data-wait-ms="${w.ms}"${about} x="${x}" y="${y + (approval ? 7 : 9)}" width="${width}" height="${ROW_H - (approval ? 14 : 18)}" fill="${approval ? WAIT_COLOR.approval : WAIT_COLOR.rate_limit}"${approval && w.decision !== "allow" ? ' stroke="#7f1d1d"' : ""}><title>${escapeHtml(waitText(w))}</title></rect>`,
    );
    // Who decided, written in the wait when it is wide enough to hold it.
    const label = approval ? `${w.decision}${w.reviewer === undefined ? "" : ` · ${w.reviewer}`}` : "";
    if (label !== "" && width >= 7 * label.length) parts.push(`<text class="wait-label" x="${x + 4}" y="${y + 17}">${escapeHtml(label)}</text>`);
  }
  for (const t of r.retries)
    parts.push(
      `<line class="retry" x1="${scale(t.at)}" x2="${scale(t.at)}" y1="${y + 2}" y2="${y + ROW_H - 2}" stroke="#111827" stroke-width="2"><title>retry ${t.attempt}: ${escapeHtml(t.error)}</title></line>`,
    );
  if (r.denials.length > 0) parts.push(`<text class="denial" x="${x2 + 6}" y="${y + 18}">⛔<title>${escapeHtml(r.denials.join("\n"))}</title></text>`);
  if (duration !== undefined) parts.push(`<text class="ms" x="${x2 + (r.denials.length > 0 ? 24 : 6)}" y="${y + 18}">${duration} ms</text>`);
  parts.push("</g>");
  return parts.join("");
}

export function runReportHtml(timeline: RunTimeline): string {
  const scale = (ms: number) => LEFT + (ms / timeline.span) * WIDTH;
  const height = TOP + timeline.rows.length * ROW_H + 10;
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (f) =>
        `<line class="tick" x1="${LEFT + f * WIDTH}" x2="${LEFT + f * WIDTH}" y1="${TOP - 6}" y2="${height}"/><text class="axis" x="${LEFT + f * WIDTH}" y="${TOP - 10}" text-anchor="middle">${Math.round(f * timeline.span)} ms</text>`,
    )
    .join("");
  const rolledBack = timeline.rolledBack !== undefined;
  const rows = timeline.rows.map((r, i) => rowSvg(r, i, scale, rolledBack)).join("");
  const count = (s: RowStatus) => timeline.rows.filter((r) => r.status === s).length;
  const costRows =
    timeline.cost === undefined
      ? ""
      : Object.entries(timeline.cost)
          .map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(str(v))}</td></tr>`)
          .join("");
  const details = timeline.rows
    .map(
      (r) =>
        `<tr class="${r.status}" data-action-id="${escapeHtml(r.id)}"><td><code>${escapeHtml(r.id)}</code></td><td>${escapeHtml(r.label)}</td><td class="status">${r.status}${rolledBack && r.status === "succeeded" ? " (rolled back)" : ""}</td><td>${r.start !== undefined && r.end !== undefined ? `${r.end - r.start} ms` : "—"}</td><td>${r.retries.length}</td><td>${r.waits.reduce((n, w) => n + w.ms, 0)} ms</td><td class="approval">${escapeHtml(
          r.waits
            .filter((w) => w.reason === "approval")
            .map(waitText)
            .join("; "),
        )}</td><td>${escapeHtml([...r.denials, r.error ?? ""].filter((s) => s !== "").join("; "))}</td></tr>`,
    )
    .join("");
  const title = `Run of proposal ${timeline.proposalId}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — CAR run report</title>
<style>${RUN_REPORT_CSS}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p><span class="outcome ${escapeHtml(timeline.outcome ?? "unknown")}">${escapeHtml(timeline.outcome ?? "unfinished")}</span>
 ${timeline.rows.length} action${timeline.rows.length === 1 ? "" : "s"}: ${count("succeeded")} succeeded, ${count("failed")} failed, ${count("rejected")} rejected, ${count("skipped")} skipped; ${timeline.span} ms</p>
${rolledBack ? `<p class="banner rollback">Rolled back: ${escapeHtml(timeline.rolledBack!)}. State writes were undone; what tools did outside CAR's state was not.</p>` : ""}
<p class="legend">${(["succeeded", "failed", "rejected", "skipped"] as const).map((s) => `<span><i class="swatch ${s}"></i>${s}</span>`).join("")}<span>| retry</span><span><i class="swatch rate_limit"></i>rate-limit wait</span><span><i class="swatch approval"></i>approval wait</span><span>⛔ denied</span></p>
<div class="timeline">
<svg xmlns="http://www.w3.org/2000/svg" width="${LEFT + WIDTH + 90}" height="${height}" viewBox="0 0 ${LEFT + WIDTH + 90} ${height}" role="img" aria-label="${escapeHtml(title)} timeline">
${ticks}
${rows}
</svg>
</div>
<h2>Actions</h2>
<table class="actions"><thead><tr><th>action</th><th>tool</th><th>status</th><th>duration</th><th>retries</th><th>waited</th><th>approval</th><th>denials / error</th></tr></thead><tbody>${details}</tbody></table>
<h2>Cost</h2>
${costRows === "" ? "<p>No cost summary: the run did not complete.</p>" : `<table class="cost"><tbody>${costRows}</tbody></table>`}
</body>
</html>
`;
}
