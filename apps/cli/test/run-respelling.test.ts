/**
 * Issue 36 §4 end to end: respellings of `full_access` commands ran under
 * `car run`'s default `sandbox_edit` gate. Now each is named as needing
 * `full_access`, the whole proposal is rejected and no tool fires.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";

let root: string;
let calls: string;

const PROGRAM = `
import { appendFileSync, readFileSync } from "node:fs";
const call = JSON.parse(readFileSync(0, "utf8"));
appendFileSync(process.argv[2], call.params.command + "\\n");
process.stdout.write(JSON.stringify({ ok: true }));
`;

const RESPELLINGS = [
  "git -C . push --force",
  "rm -r -f /",
  "kubectl -n prod delete deployment api",
  "git --git-dir=.git push -f",
  "rm --recursive --force /",
  "sudo -u root rm -rf /tmp/x",
  "terraform -chdir=infra destroy -auto-approve",
  "doas rm build.log",
];

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-run-respelling-")));
  calls = join(root, "calls.log");
  writeFileSync(join(root, "tool.mjs"), PROGRAM);
  writeFileSync(join(root, "tools.json"), JSON.stringify({ shell: { command: [process.execPath, join(root, "tool.mjs"), calls] } }));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("car run: a respelled full_access command needs full_access", () => {
  it("rejects every respelling at the default gate, and nothing runs", async () => {
    const actions = RESPELLINGS.map((command, i) => ({ id: `c${i}`, type: "tool_call", tool: "shell", parameters: { command } }));
    const file = join(root, "respelled.json");
    writeFileSync(file, JSON.stringify({ id: "respelled", actions }));
    const r = await runCar(["run", file, "--tools", join(root, "tools.json"), "--policies", root], { env: { CAR_HOME: join(root, "home") } });
    expect(r.code).toBe(1);
    expect(existsSync(calls) ? readFileSync(calls, "utf8") : "").toBe("");
    for (let i = 0; i < RESPELLINGS.length; i++)
      expect(r.stderr, RESPELLINGS[i]).toMatch(new RegExp(`approval needed: c${i} fingerprint [0-9a-f]{64} requires full_access`));
  });
});
