/**
 * A SkillStore kept in one JSON file, so learned skills survive restarts.
 * The file is read once when the store opens and rewritten after every
 * change: written to a temporary file beside it, then renamed over it, so a
 * crash leaves either the old file or the new one, never half of one. A
 * change the file refuses is undone in memory too.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { CarError, getOwn, isJsonObject } from "@car/ir";
import type { JsonValue } from "@car/ir";
import { InMemorySkillStore } from "./in-memory-skill-store.ts";
import type { SkillStore } from "./skill-store.ts";
import type { SkillRecord } from "./types.ts";

/** The file's `format` field; a file with another format is refused. */
export const SKILL_FILE_FORMAT = "car-skills/1";

export class JsonFileSkillStore implements SkillStore {
  readonly path: string;
  readonly #memory = new InMemorySkillStore();
  #writes = 0;

  /** Opens `path`, loading it when it exists; a missing file is an empty store (created on the first change). */
  constructor(path: string) {
    this.path = path;
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw new CarError("storage_error", `cannot read the skill file ${path}: ${(error as Error).message}`, {}, { cause: error });
    }
    for (const record of recordsIn(text, path)) {
      try {
        this.#memory.put(record);
      } catch (error) {
        throw new CarError("storage_error", `the skill file ${path} is not valid: ${(error as Error).message}`);
      }
    }
  }

  list(): SkillRecord[] {
    return this.#memory.list();
  }

  get(name: string): SkillRecord | undefined {
    return this.#memory.get(name);
  }

  history(name: string): SkillRecord[] {
    return this.#memory.history(name);
  }

  put(record: SkillRecord): void {
    const before = this.#memory.history(record.name);
    this.#memory.put(record);
    try {
      this.#save();
    } catch (error) {
      this.#memory.restore(record.name, before);
      throw new CarError("storage_error", `cannot write the skill file ${this.path}: ${(error as Error).message}`, {}, { cause: error });
    }
  }

  #save(): void {
    const text = `${JSON.stringify({ format: SKILL_FILE_FORMAT, skills: this.#memory.all() }, null, 2)}\n`;
    mkdirSync(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.${process.pid}.${++this.#writes}.tmp`;
    try {
      writeFileSync(temporary, text, "utf8");
      renameSync(temporary, this.path);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
  }
}

/** The records of a skill file, checked enough that the store's invariants hold. */
function recordsIn(text: string, path: string): SkillRecord[] {
  const bad = (why: string): CarError => new CarError("storage_error", `the skill file ${path} is not valid: ${why}`);
  let doc: JsonValue;
  try {
    doc = JSON.parse(text) as JsonValue;
  } catch (error) {
    throw bad((error as Error).message);
  }
  if (!isJsonObject(doc) || getOwn(doc, "format") !== SKILL_FILE_FORMAT) throw bad(`expected an object with "format": "${SKILL_FILE_FORMAT}"`);
  const skills = getOwn(doc, "skills");
  if (!Array.isArray(skills)) throw bad('"skills" must be an array');
  return skills.map((s, i) => {
    if (!isJsonObject(s) || typeof getOwn(s, "name") !== "string" || !Number.isInteger(getOwn(s, "version")) || !isJsonObject(getOwn(s, "stats") ?? null)) {
      throw bad(`skills[${i}] is not a skill record`);
    }
    return s as unknown as SkillRecord;
  });
}
