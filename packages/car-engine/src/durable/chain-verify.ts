/**
 * Chain verification, backend-neutral: a backend streams its stored events
 * (oldest first) through a `ChainVerifier`, which stops at the first broken
 * link and says why. What is checked, per event:
 *
 * - the stored bytes are the event's canonical form (so an edit that keeps
 *   the JSON meaning, or an edit of a denormalised column, still shows);
 * - SHA-256 of those bytes is the stored `hash`;
 * - `prev_hash` is the previous event's hash, `seq` the previous seq + 1;
 * - the first event links to the genesis hash, or to the newest retention
 *   checkpoint, whose HMAC signature must verify (and whose predecessors
 *   must each be named by their successor).
 *
 * - with the audit key: the event's MAC (event-mac.ts), so a rewrite that
 *   recomputed the hashes shows too. Every event must carry a valid one: an
 *   event without a MAC is a break wherever it is, or stripping every MAC
 *   and rehashing would pass. (A log written before the database was keyed
 *   therefore verifies only without the key, as a hash chain.)
 *
 * Interior edits, deletions and reorderings are found. Truncating the newest
 * events is found against the head a backend records beside the log
 * (`expectedHead`), which lives in the same database, and against anchors
 * kept outside it (anchor.ts): see the README's trust model.
 */
import type { CarEvent } from "../events/event.ts";
import { checkpointProblem } from "./checkpoint.ts";
import type { CheckpointKey, LogCutAct, SignedCheckpoint } from "./checkpoint.ts";
import { GENESIS_HASH, canonicalEventText, sha256Hex } from "./event-hash.ts";
import { macMatches } from "./event-mac.ts";
import type { AuditKey } from "./event-mac.ts";
import type { UnhashedEvent } from "./event-hash.ts";

export interface ChainBreak {
  /** The seq of the first event that does not verify (for a checkpoint problem: the first retained seq, or 0). */
  seq: number;
  reason: string;
  /** The first state key that differs, when the stored state disagrees with the replayed log. */
  key?: string;
  /** The table whose row the log does not vouch for (table-replay.ts). */
  table?: string;
}

export type ChainReport =
  | {
      ok: true;
      verified: number;
      head: { seq: number; hash: string } | null;
      checkpoint: { seq: number; created_at: string } | null;
      /**
       * Every cut of the log (a retention checkpoint), oldest first: the
       * range of seqs it removed, how many, and whether they were archived
       * or dropped. Cutting the log is on the record (DECISIONS §24), so a
       * shorter log is never reported as simply intact.
       */
      cuts: LogCut[];
      /** Whether MACs were checked (the audit key was available): without them only accidental damage is detected. */
      keyed: boolean;
      /** Anchors (kept outside the database) the log was checked against, and the newest of them. */
      anchors?: { checked: number; newest: { seq: number; anchored_at: string } | null };
      /** Whether the stored state was compared with the state the log replays to (not possible after retention removed events). */
      state?: { compared: true; keys: number } | { compared: false; reason: string };
      /** The verified events of `ChainOptions.proposal_id`, read in the same pass as the chain (absent unless asked). */
      proposal_events?: CarEvent[];
    }
  | { ok: false; verified: number; broken: ChainBreak };

/** What a caller asks of a verification beyond the report. */
export interface ChainOptions {
  /**
   * Also return this proposal id's events, from the very read that was
   * verified: a caller about to act on them (resuming a compensation) acts
   * on what was verified, not on a second read a writer could have edited
   * in between.
   */
  proposal_id?: string;
}

/** What one retention pass removed from the log. */
export interface LogCut {
  first_removed_seq: number;
  last_removed_seq: number;
  removed: number;
  mode: "archive" | "truncate";
  archive_path: string | null;
  /** The operator act that cut it (DECISIONS §24). */
  act: LogCutAct;
  created_at: string;
}

/** One stored event as a backend read it. */
export interface StoredEventRow {
  /** The event parsed from storage (with `prev_hash` and `hash`). */
  event: CarEvent;
  /** The exact stored text the hash covers, when the backend stores text; else the canonical form is recomputed. */
  stored?: string;
  /** A backend's own consistency finding for this row (a column disagreeing with the stored body), if any. */
  problem?: string;
  /** The stored MAC; null or absent for an event written without the audit key. */
  mac?: string | null;
}

export class ChainVerifier {
  #prevHash: string;
  #nextSeq: number | undefined;
  #verified = 0;
  #broken: ChainBreak | undefined;
  #head: { seq: number; hash: string } | null = null;
  readonly #checkpoint: SignedCheckpoint | undefined;
  readonly #cuts: LogCut[];
  readonly #macKey: AuditKey | undefined;

  /**
   * `checkpoints`: every retention checkpoint, oldest first. The newest
   * anchors the chain; a problem with any of them is reported before events.
   * `macKey`: the audit key, when event MACs are to be checked.
   */
  constructor(checkpoints: readonly SignedCheckpoint[], key: CheckpointKey | undefined, macKey?: AuditKey) {
    this.#prevHash = GENESIS_HASH;
    this.#macKey = macKey;
    let previous: string | null = null;
    for (const signed of checkpoints) {
      const problem = checkpointProblem(signed, key);
      if (problem === undefined && signed.checkpoint.previous !== previous) {
        this.#broken = { seq: signed.checkpoint.seq + 1, reason: "a retention checkpoint does not name the one before it" };
        break;
      }
      if (problem !== undefined) {
        this.#broken = { seq: signed.checkpoint.seq + 1, reason: problem };
        break;
      }
      previous = signed.signature;
    }
    this.#checkpoint = checkpoints.at(-1);
    this.#cuts = checkpoints.map(({ checkpoint: c }) => ({
      first_removed_seq: c.first_removed_seq,
      last_removed_seq: c.seq,
      removed: c.removed,
      mode: c.mode,
      act: c.act ?? "retention",
      archive_path: c.archive_path,
      created_at: c.created_at,
    }));
    if (this.#checkpoint !== undefined) {
      this.#prevHash = this.#checkpoint.checkpoint.hash;
      this.#nextSeq = this.#checkpoint.checkpoint.seq + 1;
    }
  }

  get broken(): ChainBreak | undefined {
    return this.#broken;
  }

  /** Checks the next event; false once the chain is broken (stop reading). */
  check(row: StoredEventRow): boolean {
    if (this.#broken !== undefined) return false;
    const { event } = row;
    const fail = (reason: string): false => {
      this.#broken = { seq: event.seq, reason };
      return false;
    };
    if (row.problem !== undefined) return fail(row.problem);
    if (this.#nextSeq !== undefined && event.seq !== this.#nextSeq)
      return fail(`expected seq ${this.#nextSeq} here, found ${event.seq} (events removed or reordered)`);
    if (event.prev_hash !== this.#prevHash)
      return fail(
        this.#verified === 0 && this.#checkpoint === undefined && this.#nextSeq === undefined
          ? "the first event does not link to the genesis hash (events removed from the start)"
          : "prev_hash does not match the previous event's hash",
      );
    if (typeof event.hash !== "string") return fail("the event has no hash");
    let canonical: string;
    try {
      canonical = canonicalEventText(event as UnhashedEvent);
    } catch {
      return fail("the event has no canonical form");
    }
    if (row.stored !== undefined && row.stored !== canonical) return fail("the stored event is not in canonical form (edited)");
    if (sha256Hex(canonical) !== event.hash) return fail("the event's hash does not match its content");
    if (this.#macKey !== undefined) {
      if (typeof row.mac !== "string") return fail("the event carries no MAC, and an audit key exists: written without the key, or its MAC was removed");
      if (!macMatches(this.#macKey, event.hash, row.mac)) return fail("the event's MAC does not match: it was written or rewritten without the audit key");
    }
    this.#prevHash = event.hash;
    this.#nextSeq = event.seq + 1;
    this.#head = { seq: event.seq, hash: event.hash };
    this.#verified++;
    return true;
  }

  /** The report; `expectedHead` (the head the backend recorded) detects a truncated tail. */
  finish(expectedHead?: { seq: number; hash: string } | null): ChainReport {
    if (this.#broken === undefined && expectedHead !== undefined && expectedHead !== null) {
      const head = this.#head;
      if (head === null || head.seq !== expectedHead.seq || head.hash !== expectedHead.hash) {
        this.#broken = {
          seq: head === null ? expectedHead.seq : Math.min(head.seq + 1, expectedHead.seq),
          reason: `the log should end at seq ${expectedHead.seq} with the recorded head hash (events removed from the end)`,
        };
      }
    }
    if (this.#broken !== undefined) return { ok: false, verified: this.#verified, broken: this.#broken };
    const cp = this.#checkpoint?.checkpoint;
    return {
      ok: true,
      verified: this.#verified,
      head: this.#head,
      checkpoint: cp === undefined ? null : { seq: cp.seq, created_at: cp.created_at },
      cuts: this.#cuts,
      keyed: this.#macKey !== undefined,
    };
  }
}
