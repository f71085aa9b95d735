/**
 * Who owns a skill on this server. Each tenant (a call's `tenant_id`) has
 * its own skills, the calls without a tenant share the unscoped namespace,
 * and the operator publishes global skills every caller sees. A caller's
 * view is its own skills over the global ones: what it writes — an ingest,
 * a candidate, an outcome, a promotion — lands in its own skills only, and
 * an outcome reported on a global skill starts the caller's own copy (its
 * statistics are the caller's; the global record and every other tenant's
 * copy are untouched). So a hostile caller can neither read another
 * tenant's skills nor move another tenant's promotion gate, and a skill
 * name reused by two tenants names two skills.
 *
 * Writing the global skills (publishing, deleting) is an operator act,
 * declared in the method table (methods/skills.ts); this file only keeps
 * the stores apart and bounds what one caller can make them hold.
 */
import { join } from "node:path";
import { CarError } from "@car/ir";
import { InMemorySkillStore, JsonFileSkillStore, type SkillRecord, type SkillStore } from "@car/engine/skills";
import type { PermissionTier } from "@car/policy";
import type { Session } from "./session.ts";

/** The owner label of the global skills (in their file, and `owner` in results). */
export const GLOBAL_OWNER = "global";
/** The owner label of the skills of calls without a tenant. */
export const UNSCOPED_OWNER = "unscoped";

/** Most bytes (JSON) one skill version may take: a skill is a procedure, not a payload. */
export const MAX_SKILL_BYTES = 256 * 1024;
/** Most skill names one owner may hold. */
export const MAX_SKILLS_PER_OWNER = 4096;
/** Most versions one skill name may accumulate. */
export const MAX_VERSIONS_PER_SKILL = 256;
/** Most skills one call may ingest. */
export const MAX_SKILLS_PER_CALL = 256;
/** Most owners' stores one library keeps open: a caller naming ever new tenant ids cannot grow memory without bound. */
export const MAX_OPEN_OWNERS = 4096;

/** The owner label of a tenant's skills (undefined: the unscoped namespace). */
export function ownerOf(tenantId: string | undefined): string {
  return tenantId === undefined ? UNSCOPED_OWNER : `tenant:${tenantId}`;
}

/** Refuses a skill document or batch past the bounds with `budget_exceeded`, before anything is parsed or stored. */
export function checkSkillBytes(what: string, bytes: number): void {
  if (bytes > MAX_SKILL_BYTES) throw new CarError("budget_exceeded", `${what} is ${bytes} bytes; one skill may take at most ${MAX_SKILL_BYTES}`);
}

export function checkSkillCount(count: number): void {
  if (count > MAX_SKILLS_PER_CALL) throw new CarError("budget_exceeded", `${count} skills in one call; the limit is ${MAX_SKILLS_PER_CALL}`);
}

/**
 * One caller's skills: its own over the global ones. Reads see both (its
 * own first); writes go to its own, copying a global skill's history in
 * first when the caller writes to it for the first time.
 */
export class SkillView implements SkillStore {
  constructor(
    readonly own: SkillStore,
    readonly global: SkillStore,
  ) {}

  list(): SkillRecord[] {
    const mine = this.own.list();
    const names = new Set(mine.map((s) => s.name));
    return [...mine, ...this.global.list().filter((s) => !names.has(s.name))].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get(name: string): SkillRecord | undefined {
    return this.own.get(name) ?? this.global.get(name);
  }

  history(name: string): SkillRecord[] {
    const mine = this.own.history(name);
    return mine.length > 0 ? mine : this.global.history(name);
  }

  put(record: SkillRecord): void {
    const bytes = Buffer.byteLength(JSON.stringify(record), "utf8");
    checkSkillBytes(`skill '${record.name.slice(0, 128)}'`, bytes);
    let versions = this.own.history(record.name);
    if (versions.length === 0) {
      if (this.own.list().length >= MAX_SKILLS_PER_OWNER) {
        throw new CarError("budget_exceeded", `this owner already holds ${MAX_SKILLS_PER_OWNER} skills; delete one first`);
      }
      // The caller's first write to a global skill: its own copy starts from the global history.
      versions = this.global.history(record.name);
      for (const version of versions) this.own.put(version);
    }
    if (record.version > (versions.at(-1)?.version ?? 0) && versions.length >= MAX_VERSIONS_PER_SKILL) {
      throw new CarError("budget_exceeded", `skill '${record.name.slice(0, 128)}' already has ${MAX_VERSIONS_PER_SKILL} versions`);
    }
    this.own.put(record);
  }

  /** Deletes the caller's own copy only; a global skill stays. */
  delete(name: string): boolean {
    return this.own.delete(name);
  }

  /** Whose record `get(name)` answers with: the caller's own, a global one, or none. */
  ownerOf(name: string): "own" | "global" | undefined {
    if (this.own.history(name).length > 0) return "own";
    return this.global.history(name).length > 0 ? "global" : undefined;
  }

  /** A record (or match) as the wire shows it: `platform` (the reference's name for the domain) and whose it is. */
  shown<R extends SkillRecord>(record: R): R & { platform: string; owner: "own" | "global" } {
    return { ...record, platform: record.domain, owner: this.ownerOf(record.name) ?? "own" };
  }
}

/** Every owner's skill store on one server (or, without a database, one session). */
export class SkillLibrary {
  readonly #stores = new Map<string, SkillStore>();

  /** `durable`: the stores are files, so a closed one loses nothing and is read again when next named. */
  private constructor(
    private readonly open: (owner: string) => SkillStore,
    private readonly durable: boolean,
  ) {}

  /**
   * Files under `carHome`: the unscoped namespace keeps `skills.json` (the
   * file every session shared before owners existed — its skills stay the
   * unscoped callers', never become global or a tenant's), the global skills
   * `skills/global.json`, each tenant `skills/tenants/<hex of its id>.json`
   * (hex, so ids differing only in case stay apart on any file system).
   */
  static inDirectory(carHome: string): SkillLibrary {
    return new SkillLibrary((owner) => {
      if (owner === UNSCOPED_OWNER) return new JsonFileSkillStore(join(carHome, "skills.json"), { owner, adoptUnowned: true });
      if (owner === GLOBAL_OWNER) return new JsonFileSkillStore(join(carHome, "skills", "global.json"), { owner });
      const tenant = owner.slice("tenant:".length);
      return new JsonFileSkillStore(join(carHome, "skills", "tenants", `${Buffer.from(tenant, "utf8").toString("hex")}.json`), { owner });
    }, true);
  }

  static inMemory(): SkillLibrary {
    return new SkillLibrary(() => new InMemorySkillStore(), false);
  }

  #store(owner: string): SkillStore {
    let store = this.#stores.get(owner);
    if (store === undefined) {
      if (this.#stores.size >= MAX_OPEN_OWNERS) this.#makeRoom();
      this.#stores.set(owner, (store = this.open(owner)));
    }
    return store;
  }

  /** Closes the stores holding nothing, and with files the oldest opened too; in memory a full library is `budget_exceeded`. */
  #makeRoom(): void {
    const closable = [...this.#stores.keys()].filter((o) => o !== GLOBAL_OWNER && o !== UNSCOPED_OWNER);
    for (const owner of closable) if (this.#stores.get(owner)!.list().length === 0) this.#stores.delete(owner);
    if (this.#stores.size < MAX_OPEN_OWNERS) return;
    if (!this.durable) throw new CarError("budget_exceeded", `this library already holds the skills of ${MAX_OPEN_OWNERS} tenants`);
    for (const owner of closable.slice(0, Math.ceil(MAX_OPEN_OWNERS / 4))) this.#stores.delete(owner);
  }

  get global(): SkillStore {
    return this.#store(GLOBAL_OWNER);
  }

  /** A tenant's own skills (undefined: the unscoped namespace's). */
  own(tenantId: string | undefined): SkillStore {
    return this.#store(ownerOf(tenantId));
  }

  /** What a caller of `tenantId` sees and writes. */
  view(tenantId: string | undefined): SkillView {
    return new SkillView(this.own(tenantId), this.global);
  }
}

const serverLibraries = new Map<string, SkillLibrary>();
const sessionLibraries = new WeakMap<Session, SkillLibrary>();

/** The session's skill library: the server's (files in `CAR_HOME`, shared by every session) with a database, else the session's own. */
export function skillLibraryOf(session: Session): SkillLibrary {
  if (session.options.store === undefined) {
    let library = sessionLibraries.get(session);
    if (library === undefined) sessionLibraries.set(session, (library = SkillLibrary.inMemory()));
    return library;
  }
  const home = session.options.carHome;
  let library = serverLibraries.get(home);
  if (library === undefined) serverLibraries.set(home, (library = SkillLibrary.inDirectory(home)));
  return library;
}

/**
 * The `deployment_tier` of the skill a caller names as the one that drove a
 * proposal (`skill` on `permission.evaluate` / `pending` and
 * `proposal.submit`), looked up in that tenant's skills and the global
 * ones: it caps the standing tier. A name the caller cannot see is
 * `not_found` — never an evaluation without the cap; a skill without a
 * tier caps nothing.
 */
export function skillCeilingOf(session: Session, tenantId: string | undefined, name: string): PermissionTier | undefined {
  const skill = skillLibraryOf(session).view(tenantId).get(name);
  if (skill === undefined) throw new CarError("not_found", `no skill named '${name.slice(0, 128)}' in this tenant's or the global skills`);
  return skill.deployment_tier;
}
