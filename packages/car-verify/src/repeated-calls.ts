/**
 * Loop detection: three or more `tool_call`s to one tool with canonically
 * equal parameters. The count is exact but "runaway loop" is a guess — a
 * legitimate triple poll trips it too — so the finding is a `heuristic`
 * warning, never an error.
 */
import type { Action, VerificationIssue } from "@car/ir";
import { canonicalJson } from "@car/ir";
import { GROUP_SAMPLE, sampleList } from "./grouped.ts";
import { issue } from "./issue.ts";

export const REPEAT_THRESHOLD = 3;

export function repeatedCallIssues(actions: readonly Action[]): VerificationIssue[] {
  // Canonical forms are only worth computing for tools called often enough.
  const perTool = new Map<string, number>();
  for (const a of actions) if (a.type === "tool_call" && a.tool !== undefined) perTool.set(a.tool, (perTool.get(a.tool) ?? 0) + 1);

  const groups = new Map<string, Action[]>();
  for (const a of actions) {
    if (a.type !== "tool_call" || a.tool === undefined || perTool.get(a.tool)! < REPEAT_THRESHOLD) continue;
    let params: string;
    try {
      params = canonicalJson(a.parameters);
    } catch {
      continue; // no canonical form (e.g. a lone surrogate): cannot be compared, so not counted
    }
    const key = `${a.tool}\u0000${params}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [a]);
    else group.push(a);
  }

  const issues: VerificationIssue[] = [];
  for (const group of groups.values()) {
    if (group.length < REPEAT_THRESHOLD) continue;
    const first = group[0]!;
    const ids = sampleList(
      group.slice(0, GROUP_SAMPLE).map((a) => `'${a.id}'`),
      group.length,
    );
    issues.push(
      issue(first, "warning", `tool '${first.tool}' is called ${group.length} times with identical parameters (${ids}): possible runaway loop`, "heuristic"),
    );
  }
  return issues;
}
