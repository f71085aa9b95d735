/**
 * The skill library: `skill.*` / `skills.*` (ingest, find, report outcomes,
 * distill, evolve, repair, the trial lifecycle). Every call but
 * `skills.distill` works in the caller's tenant (`tenant_id`): it sees that
 * tenant's own skills over the operator's global ones and writes only its
 * own. Publishing to every tenant and deleting are the operator's.
 */
import { method } from "./declaration.ts";
import { anyValue, boolean, integer, listOf, object, oneOf, optional, optionalListOf, string, stringList } from "./schema.ts";

/** The tenant whose skills a call reaches; absent: the unscoped namespace. */
const tenant_id = optional("string");
const tier = oneOf(["read_only", "sandbox_edit", "full_access"]);

const ingest = method({
  role: "agent",
  summary: "Stores a hand-written skill in the tenant's skills (deployment_tier caps the tier of actions it drives); answers its version number.",
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
      deployment_tier: tier,
      tenant_id,
    },
    ["name", "code"],
  ),
  result: integer,
});
const find = method({
  role: "agent",
  summary: "The best-matching skills for a persona, URL, task or domain, of the tenant's own and the global ones (`owner` says which).",
  params: object({
    persona: optional("string"),
    url: optional("string"),
    task: optional("string"),
    domain: optional("string"),
    max_results: optional("number"),
    tenant_id,
  }),
  result: anyValue,
});
const report = method({
  role: "agent",
  summary:
    "Records a skill's outcome (\"success\", another outcome string for a failure, or a boolean) in the tenant's own copy's stats (a global skill's first outcome starts that copy).",
  params: object({ skill_name: string, outcome: { type: ["string", "boolean"] }, tenant_id }, ["skill_name", "outcome"]),
  result: anyValue,
});
const repair = method({
  role: "agent",
  summary: "Asks the client to repair a broken skill; answers its new code, or null.",
  params: object({ skill_name: string, tenant_id }, ["skill_name"]),
  result: anyValue,
});

export const skillMethods = {
  "skill.ingest": ingest,
  "skills.ingest": ingest,
  "skills.ingest_distilled": method({
    role: "agent",
    summary: "Stores distilled skills (at most 256, each at most 256 KiB) in the tenant's skills; answers how many.",
    params: object({ skills: listOf(anyValue), tenant_id }, ["skills"]),
    result: object({ ingested: anyValue }, ["ingested"]),
  }),
  "skill.find": find,
  "skills.find": find,
  "skill.report": report,
  "skills.report_outcome": report,
  "skills.list": method({
    role: "agent",
    summary: "The tenant's own and the global skills, optionally of one domain (`owner` says whose).",
    params: object({ domain: optional("string"), tenant_id }),
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
    params: object({ threshold: optional("number"), tenant_id }),
    result: anyValue,
  }),
  "skills.evolve": method({
    role: "agent",
    summary: "Evolves a domain's skills with the client's model.",
    params: object({ domain: string, events: optionalListOf(anyValue), tenant_id }, ["domain"]),
    result: anyValue,
  }),
  "skill.repair": repair,
  "skills.repair": repair,
  "skills.ingest_provisional": method({
    role: "agent",
    summary:
      "Puts distilled skills on trial as candidates (`<name>@cand`) in the tenant's skills (`tenant_id`, or the reference's `tenant`); answers how many.",
    params: object({ skills: listOf(anyValue), tenant_id, tenant: optional("string") }, ["skills"]),
    result: object({ ingested: integer }, ["ingested"]),
  }),
  "skills.gate": method({
    role: "agent",
    summary: "Promotes or rejects the tenant's candidates on their trial outcomes; takes no params but tenant_id.",
    params: object({ tenant_id }),
    result: object({ promoted: stringList, rejected: stringList }, ["promoted", "rejected"]),
  }),
  "skill.meta": method({
    role: "agent",
    summary: "A skill key's lifecycle (status, incumbent, version, lineage, whose it is), or null.",
    params: object({ key: string, tenant_id }, ["key"]),
    result: {
      anyOf: [
        object(
          {
            key: string,
            status: string,
            incumbent: { type: ["string", "null"] },
            version: integer,
            platform: string,
            domain: string,
            owner: { enum: ["own", "global"] },
          },
          ["key", "status", "incumbent", "version", "owner"],
        ),
        { type: "null" },
      ],
    },
  }),
  "skill.export": method({
    role: "agent",
    summary: "An active, validated skill of the tenant's (or a global one) as portable markdown, or null.",
    params: object({ key: string, tenant_id }, ["key"]),
    result: { type: ["string", "null"] },
  }),
  "skill.import": method({
    role: "agent",
    summary: "Imports a skill from `skill.export`'s markdown (at most 256 KiB) into the tenant's own skills.",
    params: object({ markdown: string, tenant_id }, ["markdown"]),
    result: object({ imported: { const: true } }, ["imported"]),
  }),
  "skill.publish": method({
    role: "operator",
    summary: "Makes a skill global (seen by every tenant): the tenant's active skill `key`, or a `skill.export` document.",
    params: object({ key: optional("string"), markdown: optional("string"), tenant_id }),
    result: object({ published: string, version: integer }, ["published", "version"]),
  }),
  "skill.delete": method({
    role: "operator",
    summary: "Deletes every version of a tenant's skill, or with `global: true` a global one.",
    params: object({ key: string, global: optional("boolean"), tenant_id }, ["key"]),
    result: object({ deleted: boolean }, ["deleted"]),
  }),
} as const;
