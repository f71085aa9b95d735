/**
 * The skills loop over the WebSocket (`skill.*` / `skills.*`, both names the
 * reference uses): distill, ingest, list, find, report outcomes, find weak
 * domains, evolve and repair. Distillation, evolution and repair read the
 * runtime's own audit events when the caller passes no trace, so a server
 * learns from what it ran. With a server database the skills are the
 * server's (`<CAR_HOME>/skills.json`, shared by every session); without one
 * (`--db :memory:`) each session keeps its own.
 *
 * Evolution and repair here are deterministic (the original asked a model):
 * evolving a domain re-distills it from the trace and records what changed;
 * repairing a degraded skill adopts the code of a sequence that has been
 * succeeding in its domain since, or answers null when there is none.
 */
import { join } from "node:path";
import { getOwn, type JsonValue } from "@car/ir";
import {
  distillSkills,
  domainsNeedingEvolution,
  evolveSkills,
  findSkill,
  ingestDistilledSkills,
  InMemorySkillStore,
  JsonFileSkillStore,
  repairSkill,
  reportOutcome,
  traceEventsFrom,
  type DistilledSkill,
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
  return json(domain === undefined ? all : all.filter((s) => s.domain === domain));
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

function report(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const outcome = getOwn(p, "outcome");
  if (typeof outcome !== "string" && typeof outcome !== "boolean") throw invalidParams('outcome must be "success", "fail" or a boolean');
  return json(reportOutcome(storeOf(ctx.session), requireString(p, "skill_name"), outcome as "success", { clock: ctx.session.runtime.clock }));
}

function weakDomains(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const threshold = optionalNumber(paramsObject(params ?? {}), "threshold");
  return threshold === undefined ? domainsNeedingEvolution(storeOf(ctx.session)) : domainsNeedingEvolution(storeOf(ctx.session), threshold);
}

/** Candidates distilled from `trace` in `domain` (every sequence that succeeded twice or more). */
function candidatesIn(trace: unknown[], domain: string): DistilledSkill[] {
  return distillSkills(trace).filter((s) => s.domain === domain);
}

async function evolve(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const domain = requireString(paramsObject(params), "domain");
  const trace = traceOf(params, ctx, domain);
  const evolver = () => candidatesIn(trace, domain);
  return json(await evolveSkills(storeOf(ctx.session), domain, evolver, { clock: ctx.session.runtime.clock, events: trace }));
}

async function repair(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const name = requireString(paramsObject(params), "skill_name");
  const store = storeOf(ctx.session);
  const skill = store.get(name);
  if (skill === undefined || !skill.broken_for_repair) return null;
  const trace = traceOf(params, ctx, skill.domain);
  const replacement = candidatesIn(trace, skill.domain).find((c) => c.code !== skill.code);
  if (replacement === undefined) return null;
  const repaired = await repairSkill(store, name, () => ({ code: replacement.code }), { clock: ctx.session.runtime.clock, events: trace });
  return repaired === null ? null : { code: repaired.code };
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
};
