/**
 * `car mcp`'s skill tools through the MCP SDK's own client over a stdio
 * transport that spawns the real command: skills ingested into the server's
 * skill library in CAR_HOME (the unscoped `skills.json`, or `--tenant ID`'s
 * own file), listed and found, with versions; one tenant never sees
 * another's; every bad argument a tool error that names it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAR_NODE_ARGS, runCar } from "./run-car.ts";

let root: string;

async function connect(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CAR_NODE_ARGS, "mcp", ...args],
    cwd: root,
    env: { ...(process.env as Record<string, string>), CAR_HOME: join(root, "home") },
    stderr: "pipe",
  });
  const client = new Client({ name: "car-mcp-skills-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  return { isError: result.isError === true, body: JSON.parse(content[0]!.text) as Record<string, any> };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "car-mcp-skills-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const deploy = {
  name: "deploy-staging",
  code: "pnpm build && pnpm deploy --env staging",
  platform: "node",
  persona: "engineer",
  task_keywords: ["deploy", "staging"],
  description: "Deploy current branch to staging",
};

describe("car mcp skill tools", () => {
  it("ingests into the unscoped <CAR_HOME>/skills.json, lists and finds, and versions a changed skill", async () => {
    const client = await connect([]);
    try {
      expect((await call(client, "skill_list", {})).body).toEqual({ skills: [] });
      const first = await call(client, "skill_ingest", deploy);
      expect(first).toMatchObject({ isError: false, body: { name: "deploy-staging", version: 1, stored: true, owner: "unscoped" } });
      expect(JSON.parse(readFileSync(join(root, "home", "skills.json"), "utf8")).format).toBe("car-skills/1");
      // The same content again stores nothing; new code is version 2, superseding the first.
      expect((await call(client, "skill_ingest", deploy)).body).toMatchObject({ version: 1, stored: false });
      const second = await call(client, "skill_ingest", { ...deploy, code: "pnpm deploy --env staging --fast", supersedes: "deploy-staging" });
      expect(second.body).toMatchObject({ version: 2, stored: true });
      await call(client, "skill_ingest", { name: "lint", code: "pnpm lint", platform: "node", task_keywords: ["lint"] });
      await call(client, "skill_ingest", { name: "resize", code: "convert -resize", domain: "images", task_keywords: ["resize"] });

      const listed = await call(client, "skill_list", { platform: "node" });
      expect(
        listed.body.skills.map((s: { name: string; version: number; platform: string; owner: string }) => [s.name, s.version, s.platform, s.owner]),
      ).toEqual([
        ["deploy-staging", 2, "node", "own"],
        ["lint", 1, "node", "own"],
      ]);
      const found = await call(client, "skill_find", { task: "deploy the branch to staging", max_results: 3 });
      expect(found.body.matches[0]).toMatchObject({ name: "deploy-staging", code: "pnpm deploy --env staging --fast", platform: "node" });
      expect(found.body.matches[0].match_score).toBeGreaterThan(0);
      expect(found.body.matches.map((m: { name: string }) => m.name)).not.toContain("resize");
      // `query` is the reference's memory-style name for the task.
      expect((await call(client, "skill_find", { query: "resize a picture" })).body.matches.map((m: { name: string }) => m.name)).toEqual(["resize"]);
    } finally {
      await client.close();
    }
  });

  it("as --tenant, writes the tenant's own skills, which no other caller sees", async () => {
    const acme = await connect(["--tenant", "acme"]);
    try {
      expect((await call(acme, "skill_ingest", { name: "acme-only", code: "make acme" })).body).toMatchObject({ owner: "tenant:acme", version: 1 });
      const mine = (await call(acme, "skill_list", {})).body.skills.map((s: { name: string }) => s.name);
      expect(mine).toEqual(["acme-only"]);
    } finally {
      await acme.close();
    }
    const tenantFile = join(root, "home", "skills", "tenants", `${Buffer.from("acme").toString("hex")}.json`);
    expect(JSON.parse(readFileSync(tenantFile, "utf8")).owner).toBe("tenant:acme");
    const other = await connect(["--tenant", "globex"]);
    try {
      expect((await call(other, "skill_list", {})).body).toEqual({ skills: [] });
      expect((await call(other, "skill_find", { task: "make acme" })).body).toEqual({ matches: [] });
    } finally {
      await other.close();
    }
  });

  it("answers bad arguments with tool errors naming them, and writes nothing", async () => {
    const client = await connect(["--tenant", "bad-args"]);
    const file = join(root, "home", "skills", "tenants", `${Buffer.from("bad-args").toString("hex")}.json`);
    try {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ name: "x" }, /invalid arguments for skill_ingest: .*code/],
        [{ name: "x", code: "y", supersedes: "other" }, /supersedes names 'other'/],
        [{ name: "x", code: "y", colour: "red" }, /unknown argument 'colour' for skill_ingest/],
        [{ name: "x", code: "y", task_keywords: "deploy" }, /invalid arguments for skill_ingest: \/task_keywords/],
        [{ name: "x", code: "y", platform: "a", domain: "b" }, /'domain' and 'platform' are the same argument/],
      ];
      for (const [args, message] of cases) {
        const r = await call(client, "skill_ingest", args);
        expect(r.isError, JSON.stringify(args)).toBe(true);
        expect(r.body.error.message).toMatch(message);
      }
      expect((await call(client, "skill_find", { max_results: 0 })).isError).toBe(true);
      expect(existsSync(file)).toBe(false);
      expect((await call(client, "skill_ingest", { name: "x", code: "y" })).body).toMatchObject({ owner: "tenant:bad-args", version: 1 });
      expect(existsSync(file)).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("refuses an empty --tenant and an unknown option before serving (exit 2)", async () => {
    const empty = await runCar(["mcp", "--tenant", ""]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("--tenant must name a tenant");
    const unknown = await runCar(["mcp", "--memory", "x"]);
    expect(unknown.code).toBe(2);
  });
});
