/**
 * The portable form of a validated skill: a markdown document whose TOML
 * frontmatter (between `+++` lines) is the machine source of truth — the
 * skill's content and a SHA-256 digest of it — followed by a body for people.
 * Only an active, healthy skill exports; an import checks the digest and
 * records the skill as a fresh active version with zeroed stats, so it earns
 * its own track record here.
 *
 * The frontmatter is the TOML subset this module writes: `key = value` lines
 * whose values are basic strings, integers or arrays of basic strings.
 */
import { createHash } from "node:crypto";
import { CarError, canonicalJson } from "@car/ir";
import type { JsonObject, JsonValue } from "@car/ir";
import { CANDIDATE_SUFFIX, statusOf } from "./lifecycle.ts";
import { recordVersion, refOf } from "./record-version.ts";
import type { SkillOptions } from "./record-version.ts";
import { parseDistilledSkill } from "./skill-input.ts";
import type { SkillStore } from "./skill-store.ts";
import type { DistilledSkill, SkillRecord } from "./types.ts";

export const SKILL_DOCUMENT_FORMAT = "car-skill/1";
const FENCE = "+++";
const STRING_FIELDS = ["name", "domain", "description", "when_to_apply", "code", "source", "persona", "url_pattern"] as const;

/** The digest covers exactly what an import restores. */
function digestOf(skill: DistilledSkill): string {
  const content: JsonObject = {
    name: skill.name,
    domain: skill.domain,
    description: skill.description,
    when_to_apply: skill.when_to_apply,
    code: skill.code,
    source: skill.source,
    trigger: { persona: skill.trigger.persona, url_pattern: skill.trigger.url_pattern, task_keywords: [...skill.trigger.task_keywords] },
  };
  // Only when set, so a document exported before the field existed still verifies.
  if (skill.deployment_tier !== undefined) content["deployment_tier"] = skill.deployment_tier;
  return createHash("sha256").update(canonicalJson(content)).digest("hex");
}

/** A TOML basic string: JSON's escapes are TOML's, plus DEL, which TOML requires escaped. */
function tomlString(value: string): string {
  return JSON.stringify(value).replace(/\u007f/g, "\\u007F");
}

/** The document for the active, healthy skill `name`; null when it is absent, on trial, retired or degraded. */
export function exportSkill(store: SkillStore, name: string): string | null {
  if (typeof name !== "string" || name === "") throw new CarError("invalid_params", "key must be a non-empty string");
  const skill = store.get(name);
  if (skill === undefined || statusOf(skill) !== "active" || skill.broken_for_repair) return null;
  const lines = [
    FENCE,
    `format = ${tomlString(SKILL_DOCUMENT_FORMAT)}`,
    `name = ${tomlString(skill.name)}`,
    `version = ${skill.version}`,
    `domain = ${tomlString(skill.domain)}`,
    `description = ${tomlString(skill.description)}`,
    `when_to_apply = ${tomlString(skill.when_to_apply)}`,
    `code = ${tomlString(skill.code)}`,
    `source = ${tomlString(skill.source)}`,
    `persona = ${tomlString(skill.trigger.persona)}`,
    `url_pattern = ${tomlString(skill.trigger.url_pattern)}`,
    `task_keywords = [${skill.trigger.task_keywords.map(tomlString).join(", ")}]`,
    `success_count = ${skill.stats.success_count}`,
    `fail_count = ${skill.stats.fail_count}`,
    ...(skill.deployment_tier === undefined ? [] : [`deployment_tier = ${tomlString(skill.deployment_tier)}`]),
    `sha256 = ${tomlString(digestOf(skill))}`,
    FENCE,
    "",
    `# ${skill.name}`,
    "",
    skill.description === "" ? "(no description)" : skill.description,
    "",
    "## When to apply",
    "",
    skill.when_to_apply === "" ? "(not stated)" : skill.when_to_apply,
    "",
    "## Procedure",
    "",
    "```",
    skill.code,
    "```",
    "",
    `Domain: ${skill.domain}. Version ${skill.version}, ${skill.stats.success_count} successes and ${skill.stats.fail_count} failures where it was exported.`,
    "",
  ];
  return lines.join("\n");
}

/** Imports a `skill.export` document; returns the recorded version. A malformed document or a digest that does not verify is `invalid_params`. */
export function importSkill(store: SkillStore, markdown: string, options: SkillOptions = {}): SkillRecord {
  if (typeof markdown !== "string") throw new CarError("invalid_params", "markdown must be a string");
  const fields = readFrontmatter(markdown);
  if (fields["format"] !== SKILL_DOCUMENT_FORMAT) throw bad(`format must be "${SKILL_DOCUMENT_FORMAT}"`);
  const text = (key: string): string => {
    const v = fields[key];
    if (typeof v !== "string") throw bad(`${key} must be a string`);
    return v;
  };
  for (const key of STRING_FIELDS) text(key);
  const keywords = fields["task_keywords"];
  if (!Array.isArray(keywords)) throw bad("task_keywords must be an array of strings");
  const skill = parseDistilledSkill(
    {
      name: text("name"),
      domain: text("domain"),
      description: text("description"),
      when_to_apply: text("when_to_apply"),
      code: text("code"),
      source: text("source"),
      trigger: { persona: text("persona"), url_pattern: text("url_pattern"), task_keywords: keywords as JsonValue },
      ...(fields["deployment_tier"] === undefined ? {} : { deployment_tier: fields["deployment_tier"] }),
    },
    "",
    "invalid_params",
  );
  if (digestOf(skill) !== text("sha256")) throw bad("its content digest does not verify (sha256)");
  if (skill.name.endsWith(CANDIDATE_SUFFIX)) throw bad(`'${skill.name}' is a candidate key; only active skills export`);
  const latest = store.get(skill.name);
  return recordVersion(store, skill, "imported", latest === undefined ? [] : [refOf(latest)], options);
}

function bad(why: string): CarError {
  return new CarError("invalid_params", `not a skill document: ${why}`);
}

/** The frontmatter's fields; every line must be one this module writes. */
function readFrontmatter(markdown: string): Record<string, JsonValue> {
  const lines = markdown.replace(/\r\n/g, "\n").split("\n");
  if (lines[0]?.trim() !== FENCE) throw bad(`it must start with a ${FENCE} line`);
  const end = lines.indexOf(FENCE, 1);
  if (end === -1) throw bad(`its frontmatter has no closing ${FENCE} line`);
  const fields: Record<string, JsonValue> = Object.create(null) as Record<string, JsonValue>;
  for (const [i, line] of lines.slice(1, end).entries()) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (match === null) throw bad(`frontmatter line ${i + 2} is not key = value`);
    const [, key, raw] = match as unknown as [string, string, string];
    if (key in fields) throw bad(`${key} appears twice`);
    fields[key] = tomlValue(raw, key);
  }
  return fields;
}

function tomlValue(raw: string, key: string): JsonValue {
  if (/^-?\d+$/.test(raw)) return Number(raw);
  if (raw.startsWith('"') || raw.startsWith("[")) {
    let value: JsonValue;
    try {
      value = JSON.parse(
        raw.replace(/\\U([0-9A-Fa-f]{8})/g, (_, hex: string) => JSON.stringify(String.fromCodePoint(Number.parseInt(hex, 16))).slice(1, -1)),
      ) as JsonValue;
    } catch {
      throw bad(`${key} is not a value this format writes`);
    }
    if (typeof value === "string" || (Array.isArray(value) && value.every((v) => typeof v === "string"))) return value;
  }
  throw bad(`${key} is not a value this format writes`);
}
