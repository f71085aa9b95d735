/**
 * `car mcp`'s skill tools (the reference's `skill_find`, `skill_ingest`,
 * `skill_list`), with the arguments of the server's `skill.find` /
 * `skill.ingest` / `skill.list`, on the server's skill library in CAR_HOME
 * (@car/server/skills) as one owner sees it: `--tenant ID`'s own skills
 * over the global ones (without `--tenant`, the unscoped namespace's, as a
 * call without `tenant_id`); writes land in that owner's own skills only.
 * The files are opened afresh on every call, so a skill written by someone
 * else since the last call is seen; a write replaces one file (atomically).
 */
import { CarError, getOwn, type JsonObject, type JsonValue } from "@car/ir";
import { type DistilledSkillInput, findSkill, ingestDistilledSkills } from "@car/engine/skills";
import { SkillLibrary, type SkillView } from "@car/server/skills";
import type { ToolDefinition } from "./mcp-tool.ts";

const TEXT = { type: "string", maxLength: 65_536 } as const;

function optionalText(args: JsonObject, key: string): string | undefined {
  const value = getOwn(args, key);
  return typeof value === "string" ? value : undefined;
}

/** The skills `tenant` (undefined: the unscoped namespace) sees in `carHome`, read afresh. */
export function skillTools(carHome: string, tenant: string | undefined): ToolDefinition[] {
  const open = (): SkillView => SkillLibrary.inDirectory(carHome).view(tenant);
  return [
    {
      name: "skill_list",
      description:
        "Lists the latest version of every skill this server's caller sees (its own over the global ones): name, version, status, platform (domain), owner (own or global), trigger, code and stats.",
      inputSchema: {
        type: "object",
        properties: { platform: { ...TEXT, description: "Keep only this platform (domain)" } },
        additionalProperties: false,
      },
      aliases: { domain: "platform" },
      run: (args) => {
        const platform = optionalText(args, "platform");
        const view = open();
        const all = view.list();
        const skills = (platform === undefined ? all : all.filter((s) => s.domain === platform)).map((s) => view.shown(s));
        return { skills } as unknown as JsonValue;
      },
    },
    {
      name: "skill_find",
      description:
        "Finds the skills for the work at hand: relevance to the task, persona, url and platform times each skill's track record; degraded and retired skills are left out. Best first, with match_score.",
      inputSchema: {
        type: "object",
        properties: {
          task: { ...TEXT, description: "What is to be done; matched against each skill's task keywords" },
          persona: TEXT,
          url: TEXT,
          platform: TEXT,
          max_results: { type: "integer", minimum: 1, maximum: 100, default: 1 },
        },
        additionalProperties: false,
      },
      aliases: { domain: "platform", query: "task" },
      run: (args) => {
        const query: { task?: string; persona?: string; url?: string; domain?: string } = {};
        for (const [key, field] of [
          ["task", "task"],
          ["persona", "persona"],
          ["url", "url"],
          ["platform", "domain"],
        ] as const) {
          const value = optionalText(args, key);
          if (value !== undefined) query[field] = value;
        }
        const max = getOwn(args, "max_results");
        const view = open();
        return { matches: findSkill(view, query, typeof max === "number" ? max : 1).map((m) => view.shown(m)) } as unknown as JsonValue;
      },
    },
    {
      name: "skill_ingest",
      description:
        "Stores a hand-written skill in the caller's own skills: a new skill at version 1, or a new version of the skill of that name (which supersedes the old one; a global skill of that name gets the caller's own copy). Storing what the latest version already holds stores nothing.",
      inputSchema: {
        type: "object",
        required: ["name", "code"],
        properties: {
          name: { ...TEXT, minLength: 1 },
          code: { ...TEXT, minLength: 1 },
          description: TEXT,
          platform: { ...TEXT, description: "The skill's domain [default: general]" },
          persona: TEXT,
          url_pattern: { ...TEXT, description: "A URL pattern; * matches any run of characters" },
          task_keywords: { type: "array", maxItems: 64, items: TEXT },
          supersedes: { ...TEXT, description: "The skill this one replaces: its own name (a new version keeps the name)" },
        },
        additionalProperties: false,
      },
      aliases: { domain: "platform" },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: (args) => {
        const name = optionalText(args, "name")!;
        const supersedes = optionalText(args, "supersedes");
        if (supersedes !== undefined && supersedes !== name) {
          throw new CarError(
            "invalid_params",
            `supersedes names '${supersedes}', but a skill here is superseded by a new version of its own name ('${name}')`,
            {
              problems: [{ pointer: "/supersedes", message: "must equal name" }],
            },
          );
        }
        const skill: DistilledSkillInput = {
          name,
          code: optionalText(args, "code")!,
          description: optionalText(args, "description") ?? "",
          domain: optionalText(args, "platform") ?? "general",
          source: "manual",
          trigger: {
            persona: optionalText(args, "persona") ?? "",
            url_pattern: optionalText(args, "url_pattern") ?? "",
            task_keywords: (getOwn(args, "task_keywords") as string[] | undefined) ?? [],
          },
        };
        const view = open();
        const stored = ingestDistilledSkills(view, [skill]) === 1;
        return { name, version: view.get(name)!.version, stored, owner: tenant === undefined ? "unscoped" : `tenant:${tenant}` };
      },
    },
  ];
}
