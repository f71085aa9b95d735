/**
 * Reads a DistilledSkill handed in by a user or an improver callback. Only
 * `name` and `code` are required; the domain may come from `domain` or
 * `scope.domain`; everything else has a default. A field of the wrong type
 * is an error naming its pointer, so a model's malformed skill is refused
 * rather than stored half-read.
 */
import { CarError, cloneJson, emptyMap, getOwn, isJsonObject } from "@car/ir";
import { isPermissionTier, PERMISSION_TIERS } from "@car/policy";
import type { CarErrorCode, ErrorProblem, JsonObject, JsonValue } from "@car/ir";
import type { DistilledSkill, SkillEvidence, SkillTrigger } from "./types.ts";

export function parseDistilledSkill(value: unknown, pointer: string, code: CarErrorCode, defaultDomain?: string): DistilledSkill {
  const problems: ErrorProblem[] = [];
  const fail = (field: string, message: string): void => {
    problems.push({ pointer: `${pointer}/${field}`, message });
  };
  if (!isJsonObject(value as JsonValue))
    throw new CarError(code, `${pointer || "(root)"}: a skill must be an object`, { problems: [{ pointer, message: "not an object" }] });
  const raw = value as JsonObject;
  const text = (field: string, fallback?: string): string => {
    const v = getOwn(raw, field);
    if (v === undefined && fallback !== undefined) return fallback;
    if (typeof v !== "string") fail(field, fallback === undefined ? "required string" : "must be a string");
    return typeof v === "string" ? v : "";
  };

  const name = text("name");
  if (name === "" && problems.length === 0) fail("name", "must not be empty");
  const skillCode = text("code");
  const scopeValue = getOwn(raw, "scope");
  if (scopeValue !== undefined && !isJsonObject(scopeValue)) fail("scope", "must be an object");
  const scope = isJsonObject(scopeValue ?? null) ? cloneJson(scopeValue as JsonObject) : emptyMap();
  const scopeDomain = getOwn(scope, "domain");
  const domain = text("domain", typeof scopeDomain === "string" ? scopeDomain : defaultDomain);
  if (getOwn(scope, "domain") === undefined) scope["domain"] = domain;

  const trigger = readTrigger(getOwn(raw, "trigger"), fail);
  const skill: DistilledSkill = {
    name,
    description: text("description", ""),
    when_to_apply: text("when_to_apply", ""),
    domain,
    code: skillCode,
    trigger,
    source: text("source", "manual"),
    scope,
  };
  const evidence = getOwn(raw, "evidence");
  if (evidence !== undefined) {
    if (isJsonObject(evidence)) skill.evidence = cloneJson(evidence) as unknown as SkillEvidence;
    else fail("evidence", "must be an object");
  }
  const tier = getOwn(raw, "deployment_tier");
  if (typeof tier === "string" && isPermissionTier(tier)) skill.deployment_tier = tier;
  else if (tier !== undefined && tier !== null) fail("deployment_tier", `must be one of ${PERMISSION_TIERS.join(", ")}`);
  if (problems.length > 0) {
    const shown = problems.slice(0, 3).map((p) => `${p.pointer}: ${p.message}`);
    throw new CarError(code, `invalid skill: ${shown.join("; ")}`, { problems });
  }
  return skill;
}

function readTrigger(value: JsonValue | undefined, fail: (field: string, message: string) => void): SkillTrigger {
  const trigger: SkillTrigger = { persona: "", url_pattern: "", task_keywords: [] };
  if (value === undefined) return trigger;
  if (!isJsonObject(value)) {
    fail("trigger", "must be an object");
    return trigger;
  }
  for (const field of ["persona", "url_pattern"] as const) {
    const v = getOwn(value, field);
    if (typeof v === "string") trigger[field] = v;
    else if (v !== undefined) fail(`trigger/${field}`, "must be a string");
  }
  const keywords = getOwn(value, "task_keywords");
  if (Array.isArray(keywords) && keywords.every((k) => typeof k === "string")) trigger.task_keywords = [...(keywords as string[])];
  else if (keywords !== undefined) fail("trigger/task_keywords", "must be an array of strings");
  return trigger;
}
