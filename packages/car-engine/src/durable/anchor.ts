/**
 * Anchors: the chain head written down outside the database (`car audit
 * anchor` appends one per call to a JSON-lines file, or prints it for an
 * external witness). Everything inside the database — events, MACs, the
 * recorded head — can be rolled back together by restoring an older copy of
 * the file, or cut short by truncating the log; an anchor cannot. So
 * verification checks that every anchor of this database still holds: the
 * event at the anchored seq exists and has the anchored hash.
 *
 * Anchors name their database twice: by `database_id`, a random id the
 * database records when it is created, and by `database`, where it lives (a
 * SQLite file's real path, a PostgreSQL server and database name). The id
 * lives inside the database, so on its own a writer could edit it and leave
 * every anchor naming some other database; the location is written down
 * outside, so an anchored location whose id changed, an anchored id found
 * elsewhere, or an anchor file with no entry for this database at all is
 * each a break; no entry at all is reported (`anchorSummary` counts none)
 * as a warning, not a break, since a database never anchored is not a
 * tampered one. One file can hold several databases' anchors.
 */
import { appendFileSync, chmodSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { CarError } from "@car/ir";
import type { ChainBreak } from "./chain-verify.ts";

export interface Anchor {
  database_id: string;
  /** Where the anchored database lives (`DatabaseIdentity.location`); absent in anchors written before it was recorded. */
  database?: string;
  seq: number;
  hash: string;
  /** RFC 3339. */
  anchored_at: string;
}

/** Appends `anchor` as one JSON line to `file` (created with mode 0600). */
export function appendAnchor(file: string, anchor: Anchor): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    appendFileSync(file, `${JSON.stringify(anchor)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (error) {
    throw new CarError("storage_error", `cannot append the anchor to '${file}': ${(error as Error).message}`, {}, { cause: error });
  }
}

function isAnchor(value: unknown): value is Anchor {
  const a = value as Partial<Anchor> | null;
  return (
    typeof a === "object" &&
    a !== null &&
    typeof a.database_id === "string" &&
    (a.database === undefined || typeof a.database === "string") &&
    Number.isSafeInteger(a.seq) &&
    typeof a.hash === "string" &&
    typeof a.anchored_at === "string"
  );
}

/** Every anchor in `file` (oldest first); an empty list when the file does not exist. A malformed line is an error, never skipped. */
export function readAnchors(file: string): Anchor[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new CarError("storage_error", `cannot read the anchor file '${file}': ${(error as Error).message}`, {}, { cause: error });
  }
  const anchors: Anchor[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    if (!isAnchor(parsed)) throw new CarError("invalid_params", `line ${i + 1} of the anchor file '${file}' is not an anchor`);
    anchors.push(parsed);
  });
  return anchors;
}

/** What the log says about one seq: its hash, `removed` (retention archived it), or undefined (no such event). */
export type HashAt = (seq: number) => string | "removed" | undefined;

/** Which database is being verified: its recorded id and where it lives. */
export interface DatabaseIdentity {
  id: string;
  location: string;
}

/** Whether `anchor` was taken of `self` (a legacy anchor without a location names it by id alone). */
function names(anchor: Anchor, self: DatabaseIdentity): boolean {
  return anchor.database === undefined ? anchor.database_id === self.id : anchor.database === self.location && anchor.database_id === self.id;
}

/**
 * The first anchor the log no longer honours, as a chain break; undefined
 * when every one holds. Beyond the heads: an anchor of this location under
 * another id (the id was edited, or the file replaced) and of this id at
 * another location (a copy) are breaks. `headSeq`: the newest event's seq (0 for an empty log).
 */
export function anchorBreak(anchors: readonly Anchor[], self: DatabaseIdentity, headSeq: number, hashAt: HashAt): ChainBreak | undefined {
  for (const anchor of anchors) {
    if (anchor.database === self.location && anchor.database_id !== self.id)
      return {
        seq: 0,
        reason: `the anchor of ${anchor.anchored_at} records the database at ${self.location} with id ${anchor.database_id}, but it now says ${self.id}: its id was edited, or the database was replaced`,
      };
    if (anchor.database !== undefined && anchor.database !== self.location && anchor.database_id === self.id)
      return {
        seq: 0,
        reason: `the anchor of ${anchor.anchored_at} records database ${self.id} at ${anchor.database}, but it was opened at ${self.location}: a copy, or the anchored database was replaced`,
      };
  }
  for (const anchor of anchors) {
    if (!names(anchor, self) || anchor.seq === 0) continue;
    if (anchor.seq > headSeq) {
      return {
        seq: headSeq + 1,
        reason: `the log ends at seq ${headSeq}, but seq ${anchor.seq} was anchored at ${anchor.anchored_at}: events removed from the end, or the database was rolled back`,
      };
    }
    const hash = hashAt(anchor.seq);
    if (hash === "removed") continue;
    if (hash !== anchor.hash) {
      return {
        seq: anchor.seq,
        reason: `the event at seq ${anchor.seq} is not the one anchored at ${anchor.anchored_at}: history was rewritten, or the database was rolled back and written again`,
      };
    }
  }
  return undefined;
}

/** How many anchors belong to `self`, and the newest of them. */
export function anchorSummary(anchors: readonly Anchor[], self: DatabaseIdentity): { checked: number; newest: { seq: number; anchored_at: string } | null } {
  const mine = anchors.filter((a) => names(a, self));
  const newest = mine.at(-1);
  return { checked: mine.length, newest: newest === undefined ? null : { seq: newest.seq, anchored_at: newest.anchored_at } };
}
