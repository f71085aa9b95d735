/** The skill library: `skill.*` / `skills.*` (ingest, find, report outcomes, distill, evolve, repair). */
import { method } from "./declaration.ts";
import { anyValue, integer, listOf, object, optional, optionalListOf, string, stringList } from "./schema.ts";

const ingest = method({
  role: "agent",
  summary: "Stores a hand-written skill; answers its version number.",
  params: object(
    {
      name: string,
      code: string,
      description: optional("string"),
      domain: optional("string"),
      platform: optional("string"),
      persona: optional("string"),
      url_pattern: optional("string"),
      supersedes: optional("string"),
      task_keywords: optional("array"),
    },
    ["name", "code"],
  ),
  result: integer,
});
const find = method({
  role: "agent",
  summary: "The best-matching skills for a persona, URL, task or domain.",
  params: object({
    persona: optional("string"),
    url: optional("string"),
    task: optional("string"),
    domain: optional("string"),
    max_results: optional("number"),
  }),
  result: anyValue,
});
const report = method({
  role: "agent",
  summary: 'Records a skill\'s outcome ("success", another outcome string for a failure, or a boolean) and updates its stats.',
  params: object({ skill_name: string, outcome: { type: ["string", "boolean"] } }, ["skill_name", "outcome"]),
  result: anyValue,
});
const repair = method({
  role: "agent",
  summary: "Asks the client to repair a broken skill; answers its new code, or null.",
  params: object({ skill_name: string }, ["skill_name"]),
  result: anyValue,
});

export const skillMethods = {
  "skill.ingest": ingest,
  "skills.ingest": ingest,
  "skills.ingest_distilled": method({
    role: "agent",
    summary: "Stores distilled skills; answers how many.",
    params: object({ skills: listOf(anyValue) }, ["skills"]),
    result: object({ ingested: anyValue }, ["ingested"]),
  }),
  "skill.find": find,
  "skills.find": find,
  "skill.report": report,
  "skills.report_outcome": report,
  "skills.list": method({
    role: "agent",
    summary: "The stored skills, optionally of one domain.",
    params: object({ domain: optional("string") }),
    result: anyValue,
  }),
  "skills.distill": method({
    role: "agent",
    summary: "Skills distilled from the given trace events (or the session's own).",
    params: object({ events: optionalListOf(anyValue), domain: optional("string") }),
    result: anyValue,
  }),
  "skills.domains_needing_evolution": method({
    role: "agent",
    summary: "Domains whose skills succeed below the threshold.",
    params: object({ threshold: optional("number") }),
    result: anyValue,
  }),
  "skills.evolve": method({
    role: "agent",
    summary: "Evolves a domain's skills with the client's model.",
    params: object({ domain: string, events: optionalListOf(anyValue) }, ["domain"]),
    result: anyValue,
  }),
  "skill.repair": repair,
  "skills.repair": repair,
  "skills.ingest_provisional": method({
    role: "agent",
    summary: "Puts distilled skills on trial as candidates (`<name>@cand`); answers how many. Skills are not tenant-scoped: a `tenant` is refused.",
    params: object({ skills: listOf(anyValue) }, ["skills"]),
    result: object({ ingested: integer }, ["ingested"]),
  }),
  "skills.gate": method({
    role: "agent",
    summary: "Promotes or rejects the candidates on their trial outcomes; takes no params.",
    params: object({}),
    result: object({ promoted: stringList, rejected: stringList }, ["promoted", "rejected"]),
  }),
  "skill.meta": method({
    role: "agent",
    summary: "A skill key's lifecycle (status, incumbent, version, lineage), or null.",
    params: object({ key: string }, ["key"]),
    result: {
      anyOf: [
        object({ key: string, status: string, incumbent: { type: ["string", "null"] }, version: integer, platform: string, domain: string }, [
          "key",
          "status",
          "incumbent",
          "version",
        ]),
        { type: "null" },
      ],
    },
  }),
  "skill.export": method({
    role: "agent",
    summary: "An active, validated skill as portable markdown, or null.",
    params: object({ key: string }, ["key"]),
    result: { type: ["string", "null"] },
  }),
  "skill.import": method({
    role: "agent",
    summary: "Imports a skill from `skill.export`'s markdown.",
    params: object({ markdown: string }, ["markdown"]),
    result: object({ imported: { const: true } }, ["imported"]),
  }),
} as const;
