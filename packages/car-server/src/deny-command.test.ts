/** `deny_command` registered over a real `car serve` WebSocket, one at a time and in a `session.init` batch. */
import { describe, expect, it } from "vitest";
import { type TestClient, useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-deny-command-");

const FORCE_PUSH = { name: "no_force_push", rule: "deny_command", program: "git", subcommand: "push", flags: ["--force|-f|--force-with-lease|+refspec"] };

/** Approved first (a push is full_access, DECISIONS §16), so the policy is what decides. */
async function submit(c: TestClient, command: string): Promise<{ status: string; error?: string }> {
  const action = { id: "push", type: "tool_call", tool: "shell", parameters: { command } };
  await c.result("permission.approve", { action });
  const r = await c.result("proposal.submit", { proposal: { actions: [action] } });
  return r.results[0];
}

describe("deny_command over the wire", () => {
  it("policy.register: denies git push with force in any spelling, lets a plain push run", async () => {
    const c = await fx.client();
    await c.result("tools.register", [{ name: "shell" }]);
    expect(await c.result("policy.register", FORCE_PUSH)).toMatchObject({ registered: "no_force_push" });
    const listed = await c.result("policy.list");
    expect(listed.policies[0].description).toContain('program="git"');
    const ran: string[] = [];
    c.handle("tools.execute", (p: any) => {
      ran.push(p.params.command);
      return { result: "ok" };
    });
    for (const command of ["git push -f", "git push origin +main", "git push --force-with-lease", 'git "push" origin main --force']) {
      const r = await submit(c, command);
      expect(r.status, command).toBe("rejected");
      expect(r.error).toContain("no_force_push");
    }
    expect(ran).toEqual([]);
    expect((await submit(c, "git push origin main")).status).toBe("succeeded");
    expect(ran).toEqual(["git push origin main"]);
  });

  it("session.init: a deny_command in the batch is enforced", async () => {
    const c = await fx.client();
    await c.result("session.init", { client_id: "p", tools: [{ name: "shell" }], policies: [FORCE_PUSH] });
    c.handle("tools.execute", () => ({ result: "ok" }));
    expect((await submit(c, "git push -f")).status).toBe("rejected");
    expect((await submit(c, "git push")).status).toBe("succeeded");
  });

  it("refuses malformed fields with -32602 naming the field, registering nothing from the batch", async () => {
    const c = await fx.client();
    const bad = [
      [{ name: "p", rule: "deny_command" }, "program is required"],
      [{ name: "p", rule: "deny_command", program: "git", flags: "-f" }, "flags must be an array of strings"],
      [{ name: "p", rule: "deny_command", program: "git", args: [1] }, "args must be an array of strings"],
      [{ name: "p", rule: "deny_command", program: "git", param: 3 }, "param must be a string"],
    ] as const;
    for (const [def, message] of bad) {
      const error = (await c.call("policy.register", def)).error;
      expect(error?.code).toBe(-32602);
      expect(error?.message).toContain(message);
    }
    const batch = await c.call("session.init", {
      tools: [{ name: "shell" }],
      policies: [FORCE_PUSH, { name: "q", rule: "deny_command", program: "rm", flags: [true] }],
    });
    expect(batch.error?.code).toBe(-32602);
    expect(batch.error?.message).toContain("flags must be an array of strings");
    expect(await c.result("policy.list")).toEqual({ policies: [], scope: "global" });
  });
});
