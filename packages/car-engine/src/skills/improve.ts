/**
 * Evolution and repair: the runtime decides WHEN a skill or a domain needs
 * work and records the result with its lineage; an improver decides WHAT the
 * better skill is — the caller's callback (any model), or without one the
 * deterministic default that reads the trace: evolving a domain re-distills
 * it, repairing a skill adopts the code of a sequence that keeps succeeding
 * in its domain.
 */
import { CarError, getOwn, isCarError, parseTraceEvent } from "@car/ir";
import type { TraceEvent } from "@car/ir";
import { recordVersion, refOf, sameContent } from "./record-version.ts";
import type { SkillOptions } from "./record-version.ts";
import { distillSkills } from "./distill.ts";
import { parseDistilledSkill } from "./skill-input.ts";
import type { SkillStore } from "./skill-store.ts";
import type { DistilledSkillInput, SkillRecord, SkillTrigger } from "./types.ts";

export interface ImproveOptions extends SkillOptions {
  /**
   * The trace: its failures in the domain (or of the skill's tools) are
   * shown to a given improver; without one, the default improver distills it.
   */
  events?: readonly unknown[];
}

/** The default evolver: every tool sequence of `events` that succeeded at least twice in the domain. */
export function distillingEvolver(events: readonly unknown[]): SkillEvolver {
  return ({ domain }) => distillSkills(events).filter((s) => s.domain === domain);
}

/** The default repairer: the code of a sequence of `events` that keeps succeeding in the skill's domain and differs from the broken code; null when there is none. */
export function distillingRepairer(events: readonly unknown[]): SkillRepairer {
  return ({ skill }) => distillSkills(events).find((c) => c.domain === skill.domain && c.code !== skill.code)?.code ?? null;
}

export interface EvolveRequest {
  domain: string;
  /** The domain's skills (latest versions) with their track records. */
  skills: SkillRecord[];
  /** `action_failed` trace events whose `data.domain` is this domain. */
  failures: TraceEvent[];
}

/** Returns the domain's new or improved skills; a name already stored becomes its next version. */
export type SkillEvolver = (request: EvolveRequest) => readonly DistilledSkillInput[] | Promise<readonly DistilledSkillInput[]>;

export interface RepairRequest {
  skill: SkillRecord;
  /** `action_failed` trace events whose tool is one the skill's evidence names, or whose domain is the skill's. */
  failures: TraceEvent[];
}

/** What a repair may change; the rest of the skill is kept. */
export interface SkillRepair {
  code: string;
  description?: string;
  when_to_apply?: string;
  trigger?: Partial<SkillTrigger>;
}

/** Returns the repaired code (or a SkillRepair), or null to give up. */
export type SkillRepairer = (request: RepairRequest) => string | SkillRepair | null | Promise<string | SkillRepair | null>;

/**
 * Asks the improver (the default one when none is given) for better skills in `domain` and records each one it
 * returns (domain defaulted to `domain`; another domain is refused). An
 * improved name is derived from its previous version; a new name from every
 * skill the improver was shown; a skill returned unchanged is not recorded
 * again. Returns the recorded versions.
 */
export async function evolveSkills(store: SkillStore, domain: string, improver?: SkillEvolver | null, options: ImproveOptions = {}): Promise<SkillRecord[]> {
  if (typeof domain !== "string" || domain === "") throw new CarError("invalid_params", "domain must be a non-empty string");
  if (improver != null && typeof improver !== "function") throw new CarError("invalid_params", "the skill evolver must be a function");
  const evolver = improver ?? distillingEvolver(options.events ?? []);
  const skills = store.list().filter((s) => s.domain === domain);
  const failures = failuresIn(options.events).filter((e) => getOwn(e.data, "domain") === domain);
  const returned = await callImprover("evolver", () => evolver({ domain, skills, failures }));
  if (!Array.isArray(returned)) throw new CarError("invalid_output", "the skill evolver must return an array of skills");
  const parsed = returned.map((s, i) => parseDistilledSkill(s, `/${i}`, "invalid_output", domain));
  for (const s of parsed) {
    if (s.domain !== domain) throw new CarError("invalid_output", `the skill evolver returned '${s.name}' in domain '${s.domain}', not '${domain}'`);
  }
  const shown = skills.map(refOf);
  const recorded: SkillRecord[] = [];
  for (const s of parsed) {
    const latest = store.get(s.name);
    // Handing back a skill unchanged is no evolution: it keeps its version and track record.
    if (latest !== undefined && sameContent(latest, s)) continue;
    recorded.push(recordVersion(store, s, "evolved", latest === undefined ? shown : [refOf(latest)], options));
  }
  return recorded;
}

/**
 * Repairs a degraded skill: returns null (and does not call the improver)
 * when the skill is not `broken_for_repair`, or when the improver gives up;
 * otherwise records and returns the repaired next version.
 */
export async function repairSkill(store: SkillStore, name: string, improver?: SkillRepairer | null, options: ImproveOptions = {}): Promise<SkillRecord | null> {
  if (improver != null && typeof improver !== "function") throw new CarError("invalid_params", "the skill repairer must be a function");
  const repairer = improver ?? distillingRepairer(options.events ?? []);
  const skill = store.get(name);
  if (skill === undefined) throw new CarError("not_found", `no skill named '${name}'`);
  if (!skill.broken_for_repair) return null;
  const tools = new Set(skill.evidence?.tools ?? []);
  const failures = failuresIn(options.events).filter((e) => tools.has(e.tool) || getOwn(e.data, "domain") === skill.domain);
  const repair = await callImprover("repairer", () => repairer({ skill, failures }));
  if (repair === null) return null;
  const fix: SkillRepair = typeof repair === "string" ? { code: repair } : repair;
  if (typeof fix !== "object" || typeof fix.code !== "string")
    throw new CarError("invalid_output", "the skill repairer must return code, a repair object with code, or null");
  const repaired = parseDistilledSkill(
    {
      ...skill,
      code: fix.code,
      description: fix.description ?? skill.description,
      when_to_apply: fix.when_to_apply ?? skill.when_to_apply,
      trigger: { ...skill.trigger, ...fix.trigger },
    },
    "",
    "invalid_output",
  );
  return recordVersion(store, repaired, "repaired", [refOf(skill)], options);
}

function failuresIn(events: readonly unknown[] | undefined): TraceEvent[] {
  if (events === undefined) return [];
  if (!Array.isArray(events)) throw new CarError("invalid_params", "events must be an array of trace events");
  return events.map(parseTraceEvent).filter((e) => e.kind === "action_failed");
}

async function callImprover<T>(what: string, call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isCarError(error)) throw error;
    throw new CarError("tool_error", `the skill ${what} failed: ${error instanceof Error ? error.message : String(error)}`, {}, { cause: error });
  }
}
