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

describe("exit codes and damaged databases", () => {
  it("car --help lists every exit status a CarError maps to", async () => {
    const { ERROR_CODES } = await import("@car/ir");
    const help = await runCar(["--help"]);
    expect(help.code).toBe(0);
    const listed = [...help.stdout.matchAll(/^ {2}(\d) {2}\S/gm)].map((m) => Number(m[1]));
    expect(listed).toEqual([0, 1, 2, 3]);
    for (const { exit } of Object.values(ERROR_CODES)) expect(listed).toContain(exit);
  });

  it("a malformed database file is a typed error naming the file and what to do", async () => {
    const proposal = join(root, "write.json");
    const tools = join(root, "tools.mjs");
    writeFileSync(proposal, JSON.stringify({ actions: [{ type: "state_write", parameters: { key: "k", value: 1 } }] }));
    writeFileSync(tools, "export const noop = () => null;\n");
    const db = join(root, "car.db");
    expect((await runCar(["run", proposal, "--tools", tools, "--db", db, "--json"], { env: { CAR_HOME: root } })).code).toBe(0);
    const { readFileSync } = await import("node:fs");
    const bytes = readFileSync(db);
    bytes.fill(0x5a, 4096);
    writeFileSync(db, bytes);
    rmSync(`${db}-wal`, { force: true });
    rmSync(`${db}-shm`, { force: true });
    const r = await runCar(["run", proposal, "--tools", tools, "--db", db], { env: { CAR_HOME: root } });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `car run: the CAR database '${db}' is damaged or not a CAR database (database disk image is malformed): move it aside and run again to start a new one, or pass --db with another file`,
    );
  });
});
