/**
 * The skills loop over the WebSocket (`skill.*` / `skills.*`, both names the
 * reference uses): distill, ingest, list, find, report outcomes, find weak
 * domains, evolve and repair. Distillation, evolution and repair read the
 * runtime's own audit events when the caller passes no trace, so a server
 * learns from what it ran.
 *
 * Every method works in the caller's tenant (`tenant_id`, validated by the
 * dispatcher): it sees its own skills over the operator's global ones and
 * writes only its own (skill-library.ts). Publishing a skill to every
 * tenant (`skill.publish`) and deleting one (`skill.delete`) are operator
 * acts, declared so in the table below. With a server database the skills
 * are the server's (files in `CAR_HOME`, shared by every session); without
 * one (`--db :memory:`) each session keeps its own.
 *
 * Evolution and repair use the engine's deterministic improvers (the
 * original asked a model): evolving a domain re-distills it from the trace;
 * repairing a degraded skill adopts the code of a sequence that has been
 * succeeding in its domain since, or answers null when there is none.
 *
 * The validation-gated lifecycle: `skills.ingest_provisional` puts
 * candidates on trial (`<base>@cand`), `skills.gate` promotes or rejects
 * them on their outcomes, `skill.meta` reads a key's lifecycle, and
 * `skill.export` / `skill.import` move a validated skill as markdown.
 */
import { CarError, getOwn, type JsonValue } from "@car/ir";
import {
  distillSkills,
  domainsNeedingEvolution,
  evolveSkills,
  exportSkill,
  findSkill,
  importSkill,
  ingestProvisionalSkills,
  ingestDistilledSkills,
  repairSkill,
  reportOutcome,
  runPromotionGate,
  skillMeta,
  traceEventsFrom,
  type DistilledSkillInput,
} from "@car/engine/skills";
import { type MethodContext, type MethodTable, agentMethod, operatorMethod } from "../method.ts";
import {
  invalidParams,
  optionalArray,
  optionalBoolean,
  optionalNumber,
  optionalString,
  paramsObject,
  requireArray,
  requireString,
  stringArray,
} from "../params.ts";
import { checkSkillBytes, checkSkillCount, skillLibraryOf, type SkillView } from "../skill-library.ts";

/** The caller's skills: its tenant's own over the global ones. */
function viewOf(ctx: MethodContext): SkillView {
  return skillLibraryOf(ctx.session).view(ctx.tenant.id);
}

/** The caller's `events`, or else the runtime's own finished tool actions, stamped with `domain`. */
function traceOf(params: JsonValue | undefined, ctx: MethodContext, domain?: string): unknown[] {
  const given = optionalArray(paramsObject(params ?? {}), "events");
  return given ?? traceEventsFrom(ctx.session.runtime.events.query(), domain);
}

const json = (value: unknown): JsonValue => value as JsonValue;

/** A batch of skills to store, bounded before any is parsed. */
function skillBatch(params: JsonValue | undefined): DistilledSkillInput[] {
  const skills = requireArray(paramsObject(params), "skills");
  checkSkillCount(skills.length);
  for (const [i, skill] of skills.entries()) checkSkillBytes(`skills[${i}]`, Buffer.byteLength(JSON.stringify(skill), "utf8"));
  return skills as unknown as DistilledSkillInput[];
}

function distill(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const domain = optionalString(paramsObject(params ?? {}), "domain");
  return json(distillSkills(traceOf(params, ctx, domain)));
}

function list(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const domain = optionalString(paramsObject(params ?? {}), "domain");
  const view = viewOf(ctx);
  const all = view.list();
  return json((domain === undefined ? all : all.filter((s) => s.domain === domain)).map((s) => view.shown(s)));
}

/** `skill.ingest`: one hand-written skill; returns its version number. */
function ingest(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  checkSkillBytes("the skill", Buffer.byteLength(JSON.stringify(p), "utf8"));
  const name = requireString(p, "name");
  const supersedes = optionalString(p, "supersedes");
  if (supersedes !== undefined && supersedes !== name) throw invalidParams("supersedes must name the skill itself: a new version keeps its name");
  const keywords = optionalArray(p, "task_keywords");
  const tier = optionalString(p, "deployment_tier");
  const skill: DistilledSkillInput = {
    name,
    code: requireString(p, "code"),
    description: optionalString(p, "description") ?? "",
    domain: optionalString(p, "platform") ?? optionalString(p, "domain") ?? "general",
    source: "manual",
    trigger: {
      persona: optionalString(p, "persona") ?? "",
      url_pattern: optionalString(p, "url_pattern") ?? "",
      task_keywords: keywords === undefined ? [] : stringArray(keywords, "task_keywords"),
    },
    ...(tier === undefined ? {} : { deployment_tier: tier as NonNullable<DistilledSkillInput["deployment_tier"]> }),
  };
  const view = viewOf(ctx);
  ingestDistilledSkills(view, [skill], { clock: ctx.session.runtime.clock });
  return view.get(name)!.version;
}

function ingestDistilled(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return { ingested: ingestDistilledSkills(viewOf(ctx), skillBatch(params), { clock: ctx.session.runtime.clock }) };
}

function find(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params ?? {});
  const query: { persona?: string; url?: string; task?: string; domain?: string } = {};
  for (const field of ["persona", "url", "task", "domain"] as const) {
    const v = optionalString(p, field);
    if (v !== undefined) query[field] = v;
  }
  const view = viewOf(ctx);
  return json(findSkill(view, query, optionalNumber(p, "max_results") ?? 1).map((m) => view.shown(m)));
}

/** `outcome`: `"success"`, any other outcome string (a failure), or a boolean (engine outcomes.ts). Counted on the caller's own copy. */
function report(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const outcome = getOwn(p, "outcome");
  if (typeof outcome !== "string" && typeof outcome !== "boolean") throw invalidParams('outcome must be "success", another outcome string or a boolean');
  return json(reportOutcome(viewOf(ctx), requireString(p, "skill_name"), outcome, { clock: ctx.session.runtime.clock }));
}

function weakDomains(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const threshold = optionalNumber(paramsObject(params ?? {}), "threshold");
  return threshold === undefined ? domainsNeedingEvolution(viewOf(ctx)) : domainsNeedingEvolution(viewOf(ctx), threshold);
}

async function evolve(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const domain = requireString(paramsObject(params), "domain");
  const trace = traceOf(params, ctx, domain);
  return json(await evolveSkills(viewOf(ctx), domain, undefined, { clock: ctx.session.runtime.clock, events: trace }));
}

async function repair(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const name = requireString(paramsObject(params), "skill_name");
  const view = viewOf(ctx);
  const skill = view.get(name);
  if (skill === undefined || !skill.broken_for_repair) return null;
  const trace = traceOf(params, ctx, skill.domain);
  const repaired = await repairSkill(view, name, undefined, { clock: ctx.session.runtime.clock, events: trace });
  return repaired === null ? null : { code: repaired.code };
}

/** `skills.ingest_provisional`: candidates on trial in the caller's tenant (`tenant_id`, or the reference's `tenant`). */
function ingestProvisional(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return { ingested: ingestProvisionalSkills(viewOf(ctx), skillBatch(params), { clock: ctx.session.runtime.clock }) };
}

/** Takes no params but a tenant (the reference's `null`): the gate's sample floor is the engine's default, so a param would be ignored, and is refused. */
function gate(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const given = params === undefined || params === null ? [] : Object.keys(paramsObject(params)).filter((k) => k !== "tenant_id");
  if (given.length > 0) throw invalidParams("skills.gate takes no params (but tenant_id)");
  return json(runPromotionGate(viewOf(ctx), { clock: ctx.session.runtime.clock }));
}

function meta(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const view = viewOf(ctx);
  const found = skillMeta(view, requireString(paramsObject(params), "key"));
  return found === null ? null : json({ ...found, owner: view.ownerOf(found.key) ?? "own" });
}

function exportOne(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return exportSkill(viewOf(ctx), requireString(paramsObject(params), "key"));
}

/** A markdown document, bounded before it is parsed. */
function skillDocument(params: JsonValue | undefined): string {
  const markdown = requireString(paramsObject(params), "markdown");
  checkSkillBytes("the skill document", Buffer.byteLength(markdown, "utf8"));
  return markdown;
}

/** Imports into the caller's own skills, never the global ones (that is `skill.publish`). */
function importOne(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  importSkill(viewOf(ctx), skillDocument(params), { clock: ctx.session.runtime.clock });
  return { imported: true };
}

/**
 * `skill.publish` (operator): makes a skill global — every tenant sees it.
 * `key` publishes the caller's tenant's active, healthy skill through its
 * portable form (so only a validated skill publishes, with zeroed stats);
 * `markdown` publishes a `skill.export` document.
 */
function publish(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const key = optionalString(p, "key");
  if ((key === undefined) === (getOwn(p, "markdown") === undefined || getOwn(p, "markdown") === null)) {
    throw invalidParams("skill.publish takes a key (a skill of the tenant) or a markdown document, not both");
  }
  let markdown: string;
  if (key !== undefined) {
    const exported = exportSkill(viewOf(ctx), key);
    if (exported === null) throw new CarError("not_found", `no active, healthy skill '${key.slice(0, 128)}' to publish in this tenant`);
    markdown = exported;
  } else {
    markdown = skillDocument(params);
  }
  const library = skillLibraryOf(ctx.session);
  const record = importSkill(library.global, markdown, { clock: ctx.session.runtime.clock });
  return { published: record.name, version: record.version };
}

/** `skill.delete` (operator): removes every version of a tenant's skill, or with `global: true` a global one. */
function deleteOne(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const key = requireString(p, "key");
  const global = optionalBoolean(p, "global") ?? false;
  if (global && ctx.tenant.id !== undefined) throw invalidParams("skill.delete: global takes no tenant_id");
  const library = skillLibraryOf(ctx.session);
  return { deleted: (global ? library.global : library.own(ctx.tenant.id)).delete(key) };
}

const tenant = { tenancy: "tenant_id" } as const;

export const skillMethods: MethodTable = {
  "skills.distill": agentMethod(distill),
  "skills.list": agentMethod(list, tenant),
  "skill.ingest": agentMethod(ingest, tenant),
  "skills.ingest": agentMethod(ingest, tenant),
  "skills.ingest_distilled": agentMethod(ingestDistilled, tenant),
  "skill.find": agentMethod(find, tenant),
  "skills.find": agentMethod(find, tenant),
  "skill.report": agentMethod(report, tenant),
  "skills.report_outcome": agentMethod(report, tenant),
  "skills.domains_needing_evolution": agentMethod(weakDomains, tenant),
  "skills.evolve": agentMethod(evolve, tenant),
  "skill.repair": agentMethod(repair, tenant),
  "skills.repair": agentMethod(repair, tenant),
  "skills.ingest_provisional": agentMethod(ingestProvisional, { ...tenant, tenantAlias: "tenant" }),
  "skills.gate": agentMethod(gate, tenant),
  "skill.meta": agentMethod(meta, tenant),
  "skill.export": agentMethod(exportOne, tenant),
  "skill.import": agentMethod(importOne, tenant),
  "skill.publish": operatorMethod(publish, tenant),
  "skill.delete": operatorMethod(deleteOne, tenant),
};
