/**
 * The README demo's `car run` arguments (relative to the repository root),
 * and the fingerprints of its deploy action, declared and resolved: full_access,
 * so a database the demo runs on needs both operations approved first
 * (DECISIONS §16, §22).
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

const deployAction = parseProposal(JSON.parse(readFileSync(join(repoRoot, "examples/deploy/proposal.json"), "utf8"))).actions.find((a) => a.id === "deploy")!;

/** The deploy as the proposal declares it (`artifact: "$build.output.artifact"`): what admission asks about. */
export const deployFingerprint = operationFingerprint(deployAction);

/** The deploy as it resolves at dispatch (the build's artifact): an operation of its own (DECISIONS §22). */
export const resolvedDeployFingerprint = operationFingerprint({ ...deployAction, parameters: { ...deployAction.parameters, artifact: "web.tar.gz" } });

/** `car approvals approve` arguments recording an operator's approvals of the demo's deploy, declared and resolved (in `--db` when given). */
export function deployApprovals(db?: string): string[][] {
  return [deployFingerprint, resolvedDeployFingerprint].map((fp) => [
    "approvals",
    "approve",
    fp,
    "--tier",
    "full_access",
    "--by",
    "test",
    ...(db === undefined ? [] : ["--db", db]),
  ]);
}
