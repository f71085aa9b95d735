/**
 * The skills loop over the WebSocket (`skill.*` / `skills.*`, both names the
 * reference uses): distill, ingest, list, find, report outcomes, find weak
 * domains, evolve and repair. Distillation, evolution and repair read the
 * runtime's own audit events when the caller passes no trace, so a server
 * learns from what it ran. With a server database the skills are the
 * server's (`<CAR_HOME>/skills.json`, shared by every session); without one
 * (`--db :memory:`) each session keeps its own.
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
import { join } from "node:path";
import { getOwn, type JsonValue } from "@car/ir";
import {
  distillSkills,
  domainsNeedingEvolution,
  evolveSkills,
  exportSkill,
  findSkill,
  importSkill,
  ingestProvisionalSkills,
  ingestDistilledSkills,
  InMemorySkillStore,
  JsonFileSkillStore,
  repairSkill,
  reportOutcome,
  runPromotionGate,
  skillMeta,
  traceEventsFrom,
  type DistilledSkillInput,
  type SkillStore,
} from "@car/engine/skills";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, optionalArray, optionalNumber, optionalString, paramsObject, requireArray, requireString, stringArray } from "../params.ts";
import type { Session } from "../session.ts";

const serverStores = new Map<string, JsonFileSkillStore>();
const sessionStores = new WeakMap<Session, InMemorySkillStore>();

function storeOf(session: Session): SkillStore {
  if (session.options.store === undefined) {
    let store = sessionStores.get(session);
    if (store === undefined) sessionStores.set(session, (store = new InMemorySkillStore()));
    return store;
  }
  const path = join(session.options.carHome, "skills.json");
  let store = serverStores.get(path);
  if (store === undefined) serverStores.set(path, (store = new JsonFileSkillStore(path)));
  return store;
}

/** The caller's `events`, or else the runtime's own finished tool actions, stamped with `domain`. */
function traceOf(params: JsonValue | undefined, ctx: MethodContext, domain?: string): unknown[] {
  const given = optionalArray(paramsObject(params ?? {}), "events");
  return given ?? traceEventsFrom(ctx.session.runtime.events.query(), domain);
}

const json = (value: unknown): JsonValue => value as JsonValue;

function distill(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const domain = optionalString(paramsObject(params ?? {}), "domain");
  return json(distillSkills(traceOf(params, ctx, domain)));
}

function list(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const domain = optionalString(paramsObject(params ?? {}), "domain");
  const all = storeOf(ctx.session).list();
  // `platform` is the reference's name for the domain.
  return json((domain === undefined ? all : all.filter((s) => s.domain === domain)).map((s) => ({ ...s, platform: s.domain })));
}

/** `skill.ingest`: one hand-written skill; returns its version number. */
function ingest(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const name = requireString(p, "name");
  const supersedes = optionalString(p, "supersedes");
  if (supersedes !== undefined && supersedes !== name) throw invalidParams("supersedes must name the skill itself: a new version keeps its name");
  const keywords = optionalArray(p, "task_keywords");
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
  };
  const store = storeOf(ctx.session);
  ingestDistilledSkills(store, [skill], { clock: ctx.session.runtime.clock });
  return store.get(name)!.version;
}

function ingestDistilled(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const skills = requireArray(paramsObject(params), "skills") as unknown as DistilledSkillInput[];
  return { ingested: ingestDistilledSkills(storeOf(ctx.session), skills, { clock: ctx.session.runtime.clock }) };
}

function find(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params ?? {});
  const query: { persona?: string; url?: string; task?: string; domain?: string } = {};
  for (const field of ["persona", "url", "task", "domain"] as const) {
    const v = optionalString(p, field);
    if (v !== undefined) query[field] = v;
  }
  return json(findSkill(storeOf(ctx.session), query, optionalNumber(p, "max_results") ?? 1));
}

/** `outcome`: `"success"`, any other outcome string (a failure), or a boolean (engine outcomes.ts). */
function report(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const outcome = getOwn(p, "outcome");
  if (typeof outcome !== "string" && typeof outcome !== "boolean") throw invalidParams('outcome must be "success", another outcome string or a boolean');
  return json(reportOutcome(storeOf(ctx.session), requireString(p, "skill_name"), outcome, { clock: ctx.session.runtime.clock }));
}

function weakDomains(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const threshold = optionalNumber(paramsObject(params ?? {}), "threshold");
  return threshold === undefined ? domainsNeedingEvolution(storeOf(ctx.session)) : domainsNeedingEvolution(storeOf(ctx.session), threshold);
}

async function evolve(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const domain = requireString(paramsObject(params), "domain");
  const trace = traceOf(params, ctx, domain);
  return json(await evolveSkills(storeOf(ctx.session), domain, undefined, { clock: ctx.session.runtime.clock, events: trace }));
}

async function repair(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const name = requireString(paramsObject(params), "skill_name");
  const store = storeOf(ctx.session);
  const skill = store.get(name);
  if (skill === undefined || !skill.broken_for_repair) return null;
  const trace = traceOf(params, ctx, skill.domain);
  const repaired = await repairSkill(store, name, undefined, { clock: ctx.session.runtime.clock, events: trace });
  return repaired === null ? null : { code: repaired.code };
}

/** `skills.ingest_provisional`: candidates on trial. Skills here are the server's (or the session's), not a tenant's: a `tenant` is refused, not ignored. */
function ingestProvisional(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const tenant = getOwn(p, "tenant");
  if (tenant !== undefined && tenant !== null) throw invalidParams("tenant: skills are not tenant-scoped on this server; omit it");
  const skills = requireArray(p, "skills") as unknown as DistilledSkillInput[];
  return { ingested: ingestProvisionalSkills(storeOf(ctx.session), skills, { clock: ctx.session.runtime.clock }) };
}

/** Takes no params (the reference's `null`): the gate's sample floor is the engine's default, so a param would be ignored, and is refused. */
function gate(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  if (params !== undefined && params !== null && Object.keys(paramsObject(params)).length > 0) throw invalidParams("skills.gate takes no params");
  return json(runPromotionGate(storeOf(ctx.session), { clock: ctx.session.runtime.clock }));
}

function meta(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return json(skillMeta(storeOf(ctx.session), requireString(paramsObject(params), "key")));
}

function exportOne(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return exportSkill(storeOf(ctx.session), requireString(paramsObject(params), "key"));
}

function importOne(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  importSkill(storeOf(ctx.session), requireString(paramsObject(params), "markdown"), { clock: ctx.session.runtime.clock });
  return { imported: true };
}

export const skillMethods: MethodTable = {
  "skills.distill": agentMethod(distill),
  "skills.list": agentMethod(list),
  "skill.ingest": agentMethod(ingest),
  "skills.ingest": agentMethod(ingest),
  "skills.ingest_distilled": agentMethod(ingestDistilled),
  "skill.find": agentMethod(find),
  "skills.find": agentMethod(find),
  "skill.report": agentMethod(report),
  "skills.report_outcome": agentMethod(report),
  "skills.domains_needing_evolution": agentMethod(weakDomains),
  "skills.evolve": agentMethod(evolve),
  "skill.repair": agentMethod(repair),
  "skills.repair": agentMethod(repair),
  "skills.ingest_provisional": agentMethod(ingestProvisional),
  "skills.gate": agentMethod(gate),
  "skill.meta": agentMethod(meta),
  "skill.export": agentMethod(exportOne),
  "skill.import": agentMethod(importOne),
};
