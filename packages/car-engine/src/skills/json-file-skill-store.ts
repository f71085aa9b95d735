/**
 * A SkillStore kept in one JSON file, so learned skills survive restarts.
 * The file is read once when the store opens and rewritten after every
 * change: written to a temporary file beside it, then renamed over it, so a
 * crash leaves either the old file or the new one, never half of one. A
 * change the file refuses is undone in memory too.
 *
 * A file may name its `owner` (a host's label, e.g. a tenant): a store
 * opened for an owner refuses a file that names another, so a file copied
 * or renamed into the wrong place is not served as someone else's skills.
 * A file written before owners existed names none; a store adopts it only
 * when told to (`adoptUnowned`), and records the owner at once.
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

export interface JsonFileSkillStoreOptions {
  /** Whose skills the file holds; a file naming another owner is refused. Without one, any file opens and keeps the owner it names. */
  owner?: string;
  /** Adopt a file that names no owner (written before owners existed) as `owner`'s, recording it in the file at once. */
  adoptUnowned?: boolean;
}

export class JsonFileSkillStore implements SkillStore {
  readonly path: string;
  readonly #memory = new InMemorySkillStore();
  #owner: string | undefined;
  #writes = 0;

  /** Opens `path`, loading it when it exists; a missing file is an empty store (created on the first change). */
  constructor(path: string, options: JsonFileSkillStoreOptions = {}) {
    this.path = path;
    this.#owner = options.owner;
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw new CarError("storage_error", `cannot read the skill file ${path}: ${(error as Error).message}`, {}, { cause: error });
    }
    const { owner, records } = contentsOf(text, path);
    for (const record of records) {
      try {
        this.#memory.put(record);
      } catch (error) {
        throw new CarError("storage_error", `the skill file ${path} is not valid: ${(error as Error).message}`);
      }
    }
    if (options.owner === undefined) {
      this.#owner = owner;
    } else if (owner === undefined) {
      if (options.adoptUnowned !== true) throw new CarError("storage_error", `the skill file ${path} names no owner; expected '${options.owner}'`);
      this.#persist("adopting");
    } else if (owner !== options.owner) {
      throw new CarError("storage_error", `the skill file ${path} holds the skills of '${owner}', not '${options.owner}'`);
    }
  }

  /** Whose skills these are, as the file records it (undefined for a file written before owners). */
  get owner(): string | undefined {
    return this.#owner;
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
    this.#persist("writing", () => this.#memory.restore(record.name, before));
  }

  delete(name: string): boolean {
    const before = this.#memory.history(name);
    if (!this.#memory.delete(name)) return false;
    this.#persist("writing", () => this.#memory.restore(name, before));
    return true;
  }

  /** Saves the file; on failure undoes the in-memory change and throws `storage_error`. */
  #persist(doing: "writing" | "adopting", undo?: () => void): void {
    try {
      this.#save();
    } catch (error) {
      undo?.();
      throw new CarError("storage_error", `cannot write the skill file ${this.path} (${doing}): ${(error as Error).message}`, {}, { cause: error });
    }
  }

  #save(): void {
    const owner = this.#owner === undefined ? {} : { owner: this.#owner };
    const text = `${JSON.stringify({ format: SKILL_FILE_FORMAT, ...owner, skills: this.#memory.all() }, null, 2)}\n`;
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

/** The owner and records of a skill file, checked enough that the store's invariants hold. */
function contentsOf(text: string, path: string): { owner: string | undefined; records: SkillRecord[] } {
  const bad = (why: string): CarError => new CarError("storage_error", `the skill file ${path} is not valid: ${why}`);
  let doc: JsonValue;
  try {
    doc = JSON.parse(text) as JsonValue;
  } catch (error) {
    throw bad((error as Error).message);
  }
  if (!isJsonObject(doc) || getOwn(doc, "format") !== SKILL_FILE_FORMAT) throw bad(`expected an object with "format": "${SKILL_FILE_FORMAT}"`);
  const owner = getOwn(doc, "owner");
  if (owner !== undefined && (typeof owner !== "string" || owner === "")) throw bad('"owner" must be a non-empty string');
  const skills = getOwn(doc, "skills");
  if (!Array.isArray(skills)) throw bad('"skills" must be an array');
  const records = skills.map((s, i) => {
    if (!isJsonObject(s) || typeof getOwn(s, "name") !== "string" || !Number.isInteger(getOwn(s, "version")) || !isJsonObject(getOwn(s, "stats") ?? null)) {
      throw bad(`skills[${i}] is not a skill record`);
    }
    return s as unknown as SkillRecord;
  });
  return { owner, records };
}
