/**
 * The CLI's user-facing edges: `car schema proposal`, byte-order marks in
 * input files, and the exit codes `car --help` documents.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileSchema, parseProposal, proposalInputSchema } from "@car/ir";
import { afterAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";

const root = mkdtempSync(join(tmpdir(), "car-ux-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const BOM = "\uFEFF";

describe("car schema proposal", () => {
  it("prints the structured-output schema, which admits a proposal that car verify accepts", async () => {
    const r = await runCar(["schema", "proposal"]);
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(printed).toEqual(proposalInputSchema);
    const proposal = { actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 }, expected_effects: { k: 1 } }] };
    expect(compileSchema(printed)(proposal).ok).toBe(true);
    expect(parseProposal(proposal).actions[0]!.max_retries).toBe(3);
    const unknown = await runCar(["schema", "plan"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown schema 'plan'");
  });
});

describe("byte-order marks", () => {
  it("are accepted at the start of proposal and state files", async () => {
    const proposal = join(root, "bom-proposal.json");
    const state = join(root, "bom-state.json");
    writeFileSync(proposal, BOM + JSON.stringify({ actions: [{ id: "check", type: "assertion", preconditions: [{ key: "ready", value: true }] }] }));
    writeFileSync(state, BOM + JSON.stringify({ ready: true }));
    const r = await runCar(["verify", proposal, "--state", state, "--format", "json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).valid).toBe(true);
  });

  it("are accepted at the start of a policy file", async () => {
    const dir = join(root, "policies");
    mkdirSync(dir);
    writeFileSync(join(dir, "deny.toml"), `${BOM}deny_tool = ["shell"]\n`);
    const lint = await runCar(["policy", "lint", dir, "--json"]);
    expect(lint.code).toBe(0);
    expect(JSON.parse(lint.stdout)).toMatchObject({ rules_loaded: 1, errors: 0 });
  });
});
