/**
 * The README demo's `car run` arguments (relative to the repository root),
 * and the fingerprint of its deploy action: full_access, so a database the
 * demo runs on needs that operation approved first (DECISIONS §16).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseProposal } from "@car/ir";
import { operationFingerprint } from "@car/policy";

export const repoRoot = new URL("../../../", import.meta.url).pathname;

export const demo = [
  "examples/deploy/proposal.json",
  "--tools",
  "examples/deploy/tools.mjs",
  "--policies",
  "examples/deploy/policies",
  "--state",
  "examples/deploy/state.json",
];

export const deployFingerprint = operationFingerprint(
  parseProposal(JSON.parse(readFileSync(join(repoRoot, "examples/deploy/proposal.json"), "utf8"))).actions.find((a) => a.id === "deploy")!,
);

/** `car approvals approve` arguments recording an operator's approval of the demo's deploy (in `--db` when given). */
export function approveDeploy(db?: string): string[] {
  return ["approvals", "approve", deployFingerprint, "--tier", "full_access", "--by", "test", ...(db === undefined ? [] : ["--db", db])];
}
