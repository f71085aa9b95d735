/**
 * The plan as one self-contained HTML page (inline CSS and SVG, no scripts,
 * nothing fetched), so it can be mailed, attached to a review or opened from
 * disk. Columns are execution levels; arrows are dependencies; dashed red
 * links are write conflicts; a node's color is its worst finding, whose text
 * is in the node's tooltip and in the table below the drawing.
 */
import type { JsonObject } from "@car/ir";
import { classifyAction } from "@car/policy";
import { escapeHtml } from "@car/server/run-report";
import type { PlanModel, PlanNode } from "./plan-model.ts";

const COL = 230;
const ROW = 86;
const NODE_W = 170;
const NODE_H = 54;
const MARGIN = 30;
const TOP = 56;

const FILL = { error: "#fbd5d5", warning: "#fdecc8", info: "#dbeafe", none: "#ffffff" } as const;
const STROKE = { error: "#b91c1c", warning: "#b45309", info: "#1d4ed8", none: "#6b7280" } as const;

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

interface Box {
  x: number;
  y: number;
}

function boxOf(node: PlanNode): Box {
  return { x: MARGIN + node.level * COL, y: TOP + node.row * ROW };
}

function nodeSvg(node: PlanNode, index: number): string {
  const { x, y } = boxOf(node);
  const tone = node.severity ?? "none";
  const tip = [`${node.id} (${node.label})${node.blocked ? " — blocked" : ""}`, ...node.issues.map((i) => `${i.severity}: ${i.message}`)].join("\n");
  return [
    `<a href="#act-${index}" class="select">`,
    `<g class="action ${tone}${node.blocked ? " blocked" : ""}" data-action-id="${escapeHtml(node.id)}">`,
    `<title>${escapeHtml(tip)}</title>`,
    `<rect x="${x}" y="${y}" width="${NODE_W}" height="${NODE_H}" rx="8" fill="${FILL[tone]}" stroke="${STROKE[tone]}" stroke-width="${node.severity === "error" ? 2.5 : 1.5}"/>`,
    `<text x="${x + 10}" y="${y + 22}" class="id">${escapeHtml(truncate(node.id, 22))}</text>`,
    `<text x="${x + 10}" y="${y + 41}" class="label">${escapeHtml(truncate(node.label, 24))}${node.issues.length > 0 ? ` · ${node.issues.length} finding${node.issues.length === 1 ? "" : "s"}` : ""}${node.blocked ? " · blocked" : ""}</text>`,
    "</g></a>",
  ].join("");
}

const json = (value: unknown): string => escapeHtml(JSON.stringify(value, null, 2));

/**
 * Everything a reviewer approves an action on, shown when its box is
 * selected (`:target`, so the page needs no script).
 */
function detailsHtml(node: PlanNode, index: number): string {
  const a = node.action;
  const c = classifyAction(a);
  const rows: [string, string][] = [
    ["type", escapeHtml(a.type)],
    ...(a.tool !== undefined ? ([["tool", `<code>${escapeHtml(a.tool)}</code>`]] as [string, string][]) : []),
    ["level", String(node.level)],
    ["tier", `${escapeHtml(c.tier)}${c.reasons.length > 0 ? ` <small>(${escapeHtml(c.reasons.join("; "))})</small>` : ""}`],
    ["reversibility", `${escapeHtml(a.reversibility)} <small>(classifier: ${escapeHtml(c.reversibility)})</small>`],
    ["compensation", a.compensation === undefined ? "none" : `<pre>${json(a.compensation)}</pre>`],
    ["failure behaviour", `${escapeHtml(a.failure_behavior)}${a.failure_behavior === "retry" ? `, up to ${a.max_retries} retries` : ""}`],
    ["timeout", a.timeout_ms === undefined ? "unbounded" : `${a.timeout_ms} ms`],
    ["idempotent", a.idempotent ? "yes" : "no"],
    ["dependencies", a.dependencies.length === 0 ? "none" : a.dependencies.map((d) => `<code>${escapeHtml(d)}</code>`).join(", ")],
    ["state dependencies", a.state_dependencies.length === 0 ? "none" : a.state_dependencies.map((d) => `<code>${escapeHtml(d)}</code>`).join(", ")],
    ["preconditions", a.preconditions.length === 0 ? "none" : `<pre>${json(a.preconditions)}</pre>`],
    ["expected effects", Object.keys(a.expected_effects).length === 0 ? "none" : `<pre>${json(a.expected_effects)}</pre>`],
    ["parameters", `<pre>${json(a.parameters)}</pre>`],
  ];
  const findings = node.issues.map((i) => `<li class="${i.severity}">${i.severity}: ${escapeHtml(i.message)}</li>`).join("");
  return [
    `<section class="detail" id="act-${index}" data-action-id="${escapeHtml(node.id)}">`,
    `<h3><code>${escapeHtml(node.id)}</code>${node.blocked ? ' <span class="badge blocked">blocked</span>' : ""}${node.severity !== undefined ? ` <span class="badge ${node.severity}">${node.severity}</span>` : ""}</h3>`,
    findings === "" ? "" : `<ul class="findings">${findings}</ul>`,
    `<dl>${rows.map(([k, v]) => `<dt>${k}</dt><dd class="${k.replace(/ /g, "-")}">${v}</dd>`).join("")}</dl>`,
    "</section>",
  ].join("");
}

function edgeSvg(from: PlanNode, to: PlanNode): string {
  const a = boxOf(from);
  const b = boxOf(to);
  const x1 = a.x + NODE_W;
  const y1 = a.y + NODE_H / 2;
  const x2 = b.x;
  const y2 = b.y + NODE_H / 2;
  const bend = Math.max(30, (x2 - x1) / 2);
  return `<path class="edge" d="M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2 - 2},${y2}" marker-end="url(#arrow)"/>`;
}

function conflictSvg(a: PlanNode, b: PlanNode, key: string): string {
  const p = boxOf(a);
  const r = boxOf(b);
  const label = `conflict: ${escapeHtml(truncate(key, 30))}`;
  if (a.level === b.level) {
    // Same column: bow out into the gap on the right, clear of both boxes.
    const x = p.x + NODE_W;
    const y1 = p.y + NODE_H / 2;
    const y2 = r.y + NODE_H / 2;
    const apex = x + 36;
    return [
      `<path class="conflict" d="M${x},${y1} C${apex},${y1} ${apex},${y2} ${x},${y2}"/>`,
      `<text class="conflict-label" x="${apex - 6}" y="${(y1 + y2) / 2 + 4}">${label}</text>`,
    ].join("");
  }
  const x1 = p.x + NODE_W / 2;
  const y1 = p.y + NODE_H;
  const x2 = r.x + NODE_W / 2;
  const y2 = r.y + NODE_H;
  const mx = (x1 + x2) / 2;
  const my = Math.max(y1, y2) + 34 + Math.abs(y2 - y1) / 4;
  return [
    `<path class="conflict" d="M${x1},${y1} Q${mx},${my} ${x2},${y2}"/>`,
    `<text class="conflict-label" x="${mx}" y="${my - 4}" text-anchor="middle">${label}</text>`,
  ].join("");
}

export interface PlanHtmlExtras {
  simulatedState?: JsonObject;
}

export function planHtml(model: PlanModel, extras: PlanHtmlExtras = {}): string {
  const byId = new Map(model.nodes.map((n) => [n.id, n]));
  const columns = Math.max(1, model.levels.length);
  const rows = Math.max(1, ...model.levels.map((l) => l.length));
  const width = MARGIN * 2 + (columns - 1) * COL + NODE_W;
  const crossLevel = model.conflicts.some(([a, b]) => byId.get(a)?.level !== byId.get(b)?.level);
  const height = TOP + rows * ROW + (crossLevel ? 70 : 10);

  const headers = model.levels.map((_, level) => `<text class="level" x="${MARGIN + level * COL}" y="${TOP - 18}">level ${level}</text>`).join("");
  const edges = model.edges
    .map(([f, t]) => {
      const from = byId.get(f);
      const to = byId.get(t);
      return from && to ? edgeSvg(from, to) : "";
    })
    .join("");
  const conflicts = model.conflicts
    .map(([a, b, key]) => {
      const na = byId.get(a);
      const nb = byId.get(b);
      return na && nb ? conflictSvg(na, nb, key) : "";
    })
    .join("");
  const nodes = model.nodes.map((n, i) => nodeSvg(n, i)).join("");
  const details = model.nodes.map((n, i) => detailsHtml(n, i)).join("\n");
  const blockedCount = model.nodes.filter((n) => n.blocked).length;

  const allIssues = [...model.proposalIssues, ...model.nodes.flatMap((n) => n.issues)];
  const issueRows = allIssues
    .map(
      (i) =>
        `<tr class="${i.severity}"><td>${i.severity}</td><td>${escapeHtml(i.action_id ?? "—")}</td><td>${escapeHtml(i.message)}</td><td>${i.tier}</td></tr>`,
    )
    .join("");
  const conflictRows = model.conflicts
    .map(
      ([a, b, key]) =>
        `<li><code>${escapeHtml(a)}</code> and <code>${escapeHtml(b)}</code> both write <code>${escapeHtml(key)}</code> with no order between them</li>`,
    )
    .join("");
  const title = `Proposal ${model.proposalId}`;

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — CAR plan</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #111827; background: #fafafa; }
h1 { font-size: 20px; margin: 0 0 4px; }
.verdict { font-weight: 600; padding: 2px 8px; border-radius: 6px; }
.verdict.valid { background: #dcfce7; color: #166534; }
.verdict.invalid { background: #fee2e2; color: #991b1b; }
.plan { background: #fff; border: 1px solid #e5e7eb; border-radius: 10px; overflow: auto; margin: 16px 0; }
svg text.id { font: 600 13px ui-monospace, SFMono-Regular, Menlo, monospace; fill: #111827; }
svg text.label { font-size: 12px; fill: #374151; }
svg text.level { font-size: 12px; fill: #6b7280; text-transform: uppercase; letter-spacing: .06em; }
svg .edge { fill: none; stroke: #6b7280; stroke-width: 1.5; }
svg .conflict { fill: none; stroke: #dc2626; stroke-width: 2; stroke-dasharray: 6 4; }
svg .conflict-label { font-size: 11px; fill: #b91c1c; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
tr.error td:first-child { color: #b91c1c; font-weight: 600; }
tr.warning td:first-child { color: #b45309; font-weight: 600; }
tr.info td:first-child { color: #1d4ed8; }
.legend span { display: inline-block; margin-right: 14px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px; vertical-align: -1px; margin-right: 4px; border: 1px solid #9ca3af; }
pre { background: #fff; border: 1px solid #e5e7eb; padding: 10px; border-radius: 8px; overflow: auto; }
svg g.blocked rect { stroke-dasharray: 5 3; fill: #e5e7eb; }
svg a.select { cursor: pointer; }
svg a.select:hover rect, svg a.select:focus rect { stroke: #111827; stroke-width: 3; }
.details section.detail { display: none; background: #fff; border: 2px solid #1d4ed8; border-radius: 10px; padding: 8px 16px; margin: 12px 0; }
.details section.detail:target { display: block; }
.details dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
.details dt { color: #6b7280; }
.details dd { margin: 0; }
.details pre { margin: 0; max-height: 240px; }
.badge { font-size: 12px; padding: 1px 6px; border-radius: 5px; background: #e5e7eb; }
.badge.error { background: #fee2e2; color: #991b1b; }
.badge.blocked { background: #d1d5db; color: #111827; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p><span class="verdict ${model.valid ? "valid" : "invalid"}">${model.valid ? "valid" : "invalid"}</span>
 ${model.nodes.length} action${model.nodes.length === 1 ? "" : "s"} in ${model.levels.length} level${model.levels.length === 1 ? "" : "s"},
 ${allIssues.length} finding${allIssues.length === 1 ? "" : "s"}, ${model.conflicts.length} conflict${model.conflicts.length === 1 ? "" : "s"}, ${blockedCount} blocked.
 Select an action to see its details.</p>
${model.omitted > 0 ? `<p class="omitted">The drawing shows the first ${model.nodes.length} actions in level order; ${model.omitted} more are left out, with their findings and conflicts (<code>car verify --json</code> lists everything).</p>\n` : ""}<p class="legend"><span><i class="swatch" style="background:#e5e7eb;border-style:dashed"></i>blocked</span><span><i class="swatch" style="background:${FILL.error}"></i>error</span><span><i class="swatch" style="background:${FILL.warning}"></i>warning</span><span><i class="swatch" style="background:${FILL.info}"></i>info</span><span>→ dependency</span><span style="color:#dc2626">- - write conflict</span></p>
<div class="plan">
<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(title)} plan">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#6b7280"/></marker></defs>
${headers}
${edges}
${conflicts}
${nodes}
</svg>
</div>
<div class="details">
${details}
</div>
<h2>Findings</h2>
${allIssues.length > 0 ? `<table><thead><tr><th>severity</th><th>action</th><th>message</th><th>tier</th></tr></thead><tbody>${issueRows}</tbody></table>` : "<p>None.</p>"}
<h2>Conflicts</h2>
${model.conflicts.length > 0 ? `<ul>${conflictRows}</ul>` : "<p>None.</p>"}
${extras.simulatedState !== undefined ? `<h2>Simulated state</h2>\n<pre>${escapeHtml(JSON.stringify(extras.simulatedState, null, 2))}</pre>` : ""}
</body>
</html>
`;
}
