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

/** FNV-1a over a string's UTF-16 units: a bucket for the counting pass, never an identity. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let c = 0; c < text.length; c++) h = Math.imul(h ^ text.charCodeAt(c), 0x01000193);
  return h >>> 0;
}

/** `tool NUL canonical parameters`, or `undefined` when the action is not a countable tool call. */
function callKey(a: Action, perTool: ReadonlyMap<string, number>): string | undefined {
  if (a.type !== "tool_call" || a.tool === undefined || perTool.get(a.tool)! < REPEAT_THRESHOLD) return undefined;
  try {
    return `${a.tool}\u0000${canonicalJson(a.parameters)}`;
  } catch {
    return undefined; // no canonical form (e.g. a lone surrogate): cannot be compared, so not counted
  }
}

export function repeatedCallIssues(actions: readonly Action[]): VerificationIssue[] {
  // Canonical forms are only worth computing for tools called often enough.
  const perTool = new Map<string, number>();
  for (const a of actions) if (a.type === "tool_call" && a.tool !== undefined) perTool.set(a.tool, (perTool.get(a.tool) ?? 0) + 1);

  // Counting pass over a fixed table of hash buckets, so calls that cannot
  // repeat (the usual case) leave no string and no map entry behind; only
  // calls whose bucket reaches the threshold are grouped exactly.
  const size = 2 ** Math.ceil(Math.log2(2 * actions.length + 1));
  const buckets = new Int32Array(size);
  const hashes = new Int32Array(actions.length).fill(-1);
  for (let i = 0; i < actions.length; i++) {
    const key = callKey(actions[i]!, perTool);
    if (key === undefined) continue;
    hashes[i] = hashOf(key) & (size - 1);
    buckets[hashes[i]!]!++;
  }
  const groups = new Map<string, Action[]>();
  for (let i = 0; i < actions.length; i++) {
    if (hashes[i] === -1 || buckets[hashes[i]!]! < REPEAT_THRESHOLD) continue;
    const a = actions[i]!;
    const key = callKey(a, perTool)!;
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
