/**
 * The plan as Graphviz DOT (`car verify --format dot | dot -Tsvg`): one rank
 * per execution level, dependency edges as arrows, write conflicts as dashed
 * red links, actions with findings filled by their worst severity.
 */
import type { PlanModel } from "./plan-model.ts";

const FILL = { error: "#f8d0d0", warning: "#fbe8c0", info: "#d8e8f8" } as const;

/** A DOT double-quoted string. */
function q(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

/** The DOT text line by line, so a plan of a million actions streams out. */
export function* planDotLines(model: PlanModel): Generator<string> {
  yield `digraph ${q(`proposal ${model.proposalId}`)} {`;
  yield "  rankdir=LR;";
  yield `  label=${q(`proposal ${model.proposalId} — ${model.valid ? "valid" : "INVALID"}`)};`;
  yield '  labelloc="t";';
  yield '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica"];';
  const byId = new Map(model.nodes.map((n) => [n.id, n]));
  for (let level = 0; level < model.levels.length; level++) {
    const ids = model.levels[level]!;
    yield `  subgraph ${q(`cluster_level_${level}`)} {`;
    yield `    label=${q(`level ${level}`)}; style=dashed; color="#bbbbbb";`;
    yield "    rank=same;";
    for (const id of ids) {
      const node = byId.get(id);
      if (node === undefined) continue;
      const findings = node.issues.map((i) => `${i.severity}: ${i.message}`).join("\n");
      const attrs = [`label=${q(`${node.id}\n${node.label}`)}`];
      if (node.severity !== undefined) {
        attrs.push(`fillcolor=${q(FILL[node.severity])}`);
        attrs.push(`tooltip=${q(findings)}`);
      }
      if (node.severity === "error") attrs.push('color="#c00000"', "penwidth=2");
      yield `    ${q(node.id)} [${attrs.join(", ")}];`;
    }
    yield "  }";
  }
  for (const [from, to] of model.edges) yield `  ${q(from)} -> ${q(to)};`;
  for (const [a, b, key] of model.conflicts) {
    yield `  ${q(a)} -> ${q(b)} [dir=none, style=dashed, color="#c00000", fontcolor="#c00000", constraint=false, label=${q(`conflict: ${key}`)}];`;
  }
  yield "}";
}

export function planDot(model: PlanModel): string {
  return [...planDotLines(model)].join("\n");
}
