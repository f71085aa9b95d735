/**
 * `car run` enforces keyword, `contains` and regex rules on the command an
 * action runs, not on its spelling (DECISIONS §17): rules written for
 * `rm -rf /` and `curl` in a policy file on disk deny `rm -r -f /` and
 * `c''url`. A real child process, real files.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";

let root: string;

const COMMANDS: [string, "rejected" | "succeeded"][] = [
  ["rm -r -f /", "rejected"],
  ["rm -fr /", "rejected"],
  ['rm  -rf "/"', "rejected"],
  ["c''url -s https://example.com", "rejected"],
  ["c\\url https://example.com", "rejected"],
  ['"cu"rl https://example.com', "rejected"],
  ["rm -rf ./build", "succeeded"],
  ["ls -la /", "succeeded"],
  ["echo cu rl", "succeeded"],
];

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-run-normalised-")));
  mkdirSync(join(root, "policies"));
  mkdirSync(join(root, "car-home"));
  writeFileSync(
    join(root, "policies", "commands.toml"),
    [
      'deny_keyword = ["rm -rf /"]',
      "[[deny_tool_param]]",
      'tool = "shell"',
      'param = "command"',
      'contains = "curl"',
      "[[deny_tool_param_matching]]",
      'tool = "shell"',
      'param = "command"',
      'matches = "(^|\\\\s)curl\\\\s"',
    ].join("\n"),
  );
  writeFileSync(
    join(root, "shell.mjs"),
    'import { readFileSync } from "node:fs"; const call = JSON.parse(readFileSync(0, "utf8")); process.stdout.write(JSON.stringify({ ran: call.params.command }));\n',
  );
  writeFileSync(join(root, "tools.json"), JSON.stringify({ shell: { command: [process.execPath, "./shell.mjs"] } }));
  writeFileSync(
    join(root, "proposal.json"),
    JSON.stringify({
      id: "normalised",
      actions: COMMANDS.map(([command], i) => ({ id: `c${i}`, type: "tool_call", tool: "shell", parameters: { command }, failure_behavior: "skip" })),
    }),
  );
  // `rm -rf /` and `curl` are full_access (DECISIONS §16): the run is an agent's whose posture allows them, so the rules decide.
  const posture = await runCar(["approvals", "set-posture", "ops", "always_allow"], { env: { CAR_HOME: join(root, "car-home") } });
  expect(posture.code, posture.stderr).toBe(0);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("car run with rules on commands", () => {
  it("denies every spelling of the command a rule names, and runs the rest", async () => {
    const args = ["run", join(root, "proposal.json"), "--tools", join(root, "tools.json"), "--policies", join(root, "policies"), "--agent", "ops", "--json"];
    const r = await runCar(args, {
      cwd: root,
      env: { CAR_HOME: join(root, "car-home") },
    });
    const result = JSON.parse(r.stdout);
    const statuses = result.results.map((x: { action_id: string; status: string }) => [COMMANDS[Number(x.action_id.slice(1))]?.[0], x.status]);
    expect(statuses).toEqual(COMMANDS);
    for (const x of result.results)
      if (x.status === "rejected")
        expect(x.error).toMatch(/^denied by policy: (deny_keyword:rm -rf \/|deny_tool_param:shell\.command|deny_tool_param_matching:shell\.command)/);
    expect(r.code).toBe(1);
  });
});
