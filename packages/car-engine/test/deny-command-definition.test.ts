import { CarError } from "@car/ir";
import { describe, expect, it } from "vitest";
import { fakeRuntime, tc } from "./helpers.ts";

const FORCE_PUSH = { name: "no_force_push", rule: "deny_command", program: "git", subcommand: "push", flags: ["--force|-f|--force-with-lease|+refspec"] };

async function statusOf(command: string, def: object = FORCE_PUSH): Promise<{ status: string; error?: string | null; ran: boolean }> {
  const { rt } = fakeRuntime();
  const ran: string[] = [];
  rt.registerTool("shell", (p) => ran.push(String(p["command"])));
  rt.registerPolicy(def as never);
  const r = await rt.executeProposal({ actions: [tc("a", "shell", { parameters: { command } })] });
  const result = r.results[0]!;
  return { status: result.status, error: result.error, ran: ran.length === 1 };
}

describe("Runtime.registerPolicy with rule deny_command", () => {
  it.each([
    "git push -f",
    "git push origin +main",
    "git push --force-with-lease",
    "git push origin main -f",
    "g''it push --force",
    "sudo git -C repo push -fu origin main",
  ])("denies %j before the tool runs", async (command) => {
    const r = await statusOf(command);
    expect(r).toMatchObject({ status: "rejected", ran: false });
    expect(r.error).toMatch(/^denied by policy: no_force_push/);
  });

  it.each(["git push", "git push origin main", "git pull -f", "echo git push -f"])("lets %j run", async (command) => {
    expect(await statusOf(command)).toMatchObject({ status: "succeeded", ran: true });
  });

  it("honours tool, param and args", async () => {
    const rmRoot = {
      name: "rm_root",
      rule: "deny_command",
      program: "rm",
      flags: ["-r|-R|--recursive", "-f|--force"],
      args: ["/"],
      tool: "shell",
      param: "script",
    };
    const calls: [string, string, Record<string, string>][] = [
      ["root", "shell", { script: 'rm -r -f "/"' }],
      ["tmp", "shell", { script: "rm -rf /tmp/x" }],
      ["otherParam", "shell", { command: "rm -rf /" }],
      ["otherTool", "other", { script: "rm -rf /" }],
    ];
    const statuses: [string, string][] = [];
    for (const [id, tool, parameters] of calls) {
      const { rt } = fakeRuntime();
      rt.registerTool("shell", () => "ran");
      rt.registerTool("other", () => "ran");
      rt.registerPolicy(rmRoot as never);
      const r = await rt.executeProposal({ actions: [tc(id, tool, { parameters })] });
      statuses.push([id, r.results[0]!.status]);
    }
    expect(statuses).toEqual([
      ["root", "rejected"],
      ["tmp", "succeeded"],
      ["otherParam", "succeeded"],
      ["otherTool", "succeeded"],
    ]);
  });

  it.each([
    [{ name: "p", rule: "deny_command" }, "deny_command.program is required"],
    [{ name: "p", rule: "deny_command", program: 7 }, "deny_command.program must be a string"],
    [{ name: "p", rule: "deny_command", program: "git", flags: "-f" }, "deny_command.flags must be an array of strings"],
    [{ name: "p", rule: "deny_command", program: "git", args: ["/", 1] }, "deny_command.args must be an array of strings"],
    [{ name: "p", rule: "deny_command", program: "git", subcommand: ["push"] }, "deny_command.subcommand must be a string"],
    [{ name: "p", rule: "deny_command", program: "git", tool: null }, "deny_command.tool must be a string"],
  ])("refuses %j with invalid_params naming the field", (def, message) => {
    const { rt } = fakeRuntime();
    let err: unknown;
    try {
      rt.registerPolicy(def as never);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CarError);
    expect((err as CarError).code).toBe("invalid_params");
    expect((err as CarError).message).toContain(message);
    expect(rt.policies.size).toBe(0);
  });
});
