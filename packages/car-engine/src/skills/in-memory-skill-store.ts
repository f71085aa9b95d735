/**
 * The default SkillStore: each name's versions in an array. Records are
 * copied in and out, so a caller editing a returned record changes nothing.
 */
import { CarError, cloneJson } from "@car/ir";
import type { JsonObject } from "@car/ir";
import type { SkillStore } from "./skill-store.ts";
import type { SkillRecord } from "./types.ts";

export function copyRecord(record: SkillRecord): SkillRecord {
  return cloneJson(record as unknown as JsonObject) as unknown as SkillRecord;
}

export class InMemorySkillStore implements SkillStore {
  readonly #versions = new Map<string, SkillRecord[]>();

  list(): SkillRecord[] {
    return [...this.#versions.keys()].sort().map((name) => copyRecord(this.#versions.get(name)!.at(-1)!));
  }

  get(name: string): SkillRecord | undefined {
    const latest = this.#versions.get(name)?.at(-1);
    return latest === undefined ? undefined : copyRecord(latest);
  }

  history(name: string): SkillRecord[] {
    return (this.#versions.get(name) ?? []).map(copyRecord);
  }

  put(record: SkillRecord): void {
    const versions = this.#versions.get(record.name) ?? [];
    const latest = versions.at(-1)?.version ?? 0;
    if (record.version === latest + 1) versions.push(copyRecord(record));
    else if (record.version === latest && latest > 0) versions[versions.length - 1] = copyRecord(record);
    else throw new CarError("invalid_params", `skill '${record.name}': cannot store version ${record.version} when the latest is ${latest}`);
    this.#versions.set(record.name, versions);
  }

  delete(name: string): boolean {
    return this.#versions.delete(name);
  }

  /** Every version of every skill, names in order: what a persistent store saves. */
  all(): SkillRecord[] {
    return [...this.#versions.keys()].sort().flatMap((name) => this.history(name));
  }

  /** Puts a name's versions back as they were (undoes a `put` that could not be persisted). */
  restore(name: string, versions: readonly SkillRecord[]): void {
    if (versions.length === 0) this.#versions.delete(name);
    else this.#versions.set(name, versions.map(copyRecord));
  }
}
