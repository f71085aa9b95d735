/**
 * Fields a proposal carries that the spec does not name. They round-trip
 * (forward compatibility: "field additions are non-breaking"), but a
 * misspelled known field — `dependecies`, `failure_behaviour` — is also
 * "unknown", and passing it silently changes what runs (DECISIONS §25). So
 * each is reported with a did-you-mean, and `strict` makes them errors.
 */
import { ACTION_FIELDS, ASSUMPTION_FIELDS, PRECONDITION_FIELDS, PROPOSAL_FIELDS, REF_COMPENSATION_FIELDS, TOOL_COMPENSATION_FIELDS } from "./fields.ts";
import { CarError } from "./errors.ts";
import { hasKey } from "./json.ts";

/** One field the spec does not name, where it sits, and the known field it most likely means. */
export interface UnknownField {
  /** JSON pointer to the field, e.g. `/actions/2/dependecies`. */
  pointer: string;
  field: string;
  /** The action it sits in (absent for a proposal-level field). */
  action_id?: string;
  /** The known field of that object it is closest to, when one is close enough to be a likely typo. */
  suggestion?: string;
  /** `unknown field 'dependecies' — did you mean 'dependencies'?` */
  message: string;
}

type Obj = Record<string, unknown>;

/** Each shape's known fields as a set: this runs over every action of proposals a million actions long. */
const KNOWN = new Map<readonly string[], ReadonlySet<string>>(
  [PROPOSAL_FIELDS, ACTION_FIELDS, PRECONDITION_FIELDS, ASSUMPTION_FIELDS, TOOL_COMPENSATION_FIELDS, REF_COMPENSATION_FIELDS].map((f) => [f, new Set(f)]),
);

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Every unknown field of a proposal, raw or parsed (parsing keeps them), in
 * document order: the proposal's own, then each action's with its
 * preconditions, assumptions and compensation.
 */
export function unknownFields(proposal: unknown): UnknownField[] {
  const found: UnknownField[] = [];
  if (!isObject(proposal)) return found;
  scan(proposal, PROPOSAL_FIELDS, "", undefined, found);
  const actions = proposal["actions"];
  if (!Array.isArray(actions)) return found;
  for (let i = 0; i < actions.length; i++) {
    const action: unknown = actions[i];
    if (!isObject(action)) continue;
    const id = typeof action["id"] === "string" ? action["id"] : undefined;
    const at = `/actions/${i}`;
    scan(action, ACTION_FIELDS, at, id, found);
    scanList(action["preconditions"], PRECONDITION_FIELDS, `${at}/preconditions`, id, found);
    scanList(action["assumptions"], ASSUMPTION_FIELDS, `${at}/assumptions`, id, found);
    const compensation = action["compensation"];
    if (isObject(compensation)) {
      scan(compensation, compensation["type"] === "action_ref" ? REF_COMPENSATION_FIELDS : TOOL_COMPENSATION_FIELDS, `${at}/compensation`, id, found);
    }
  }
  return found;
}

/** `strict`: a proposal with any unknown field is refused, each named with its pointer and did-you-mean. */
export function refuseUnknownFields(proposal: unknown): void {
  const found = unknownFields(proposal);
  if (found.length === 0) return;
  throw new CarError("invalid_proposal", `strict: ${found.map((f) => `${f.pointer}: ${f.message}`).join("; ")}`, {
    problems: found.map((f) => ({ pointer: f.pointer, message: f.message })),
  });
}

function scanList(list: unknown, known: readonly string[], at: string, actionId: string | undefined, found: UnknownField[]): void {
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    if (isObject(item)) scan(item, known, `${at}/${i}`, actionId, found);
  }
}

function scan(object: Obj, known: readonly string[], at: string, actionId: string | undefined, found: UnknownField[]): void {
  const knownSet = KNOWN.get(known)!;
  for (const key in object) {
    if (!hasKey(object, key) || knownSet.has(key)) continue;
    const suggestion = didYouMean(key, known);
    const entry: UnknownField = {
      pointer: `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`,
      field: key,
      message: `unknown field '${key}'${suggestion === undefined ? "" : ` — did you mean '${suggestion}'?`}`,
    };
    if (actionId !== undefined) entry.action_id = actionId;
    if (suggestion !== undefined) entry.suggestion = suggestion;
    found.push(entry);
  }
}

/**
 * The known field closest to `name` by edit distance (insertions, deletions,
 * substitutions and swaps of neighbours, case-insensitive), when it is close
 * enough to be a typo: at most 2 edits, or a third of a longer name
 * (`max_retry` → `max_retries` is 3). Ties go to the earlier known field.
 */
export function didYouMean(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const limit = Math.max(2, Math.floor(lower.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const d = editDistance(lower, candidate.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance, cut short once every path exceeds `cap` (returns `cap` then). */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let prev2: number[] = [];
  let prev: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row: number[] = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      if (d < rowMin) rowMin = d;
    }
    if (rowMin >= cap) return cap;
    prev2 = prev;
    prev = row;
  }
  return Math.min(prev[b.length]!, cap);
}
