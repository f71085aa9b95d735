/**
 * `parseProposal` / `parseAction`: wire JSON → typed IR with every documented
 * default applied. Structural problems come from the JSON Schemas; the
 * semantic ones (duplicate ids, unknown dependencies, cycles, `$<id>.output`
 * references to non-dependencies) are checked here, and ALL of them are
 * reported together, each with its JSON pointer.
 */
import { Ancestry } from "./ancestry.ts";
import { randomIds, rfc3339, shortId, systemClock, type Clock, type IdGenerator } from "./clock.ts";
import { edgesOf, type DependencyGraph } from "./dag.ts";
import { ACTION_DEFAULTS } from "./defaults.ts";
import { CarError, type ErrorProblem } from "./errors.ts";
import {
  ACTION_FIELDS,
  ASSUMPTION_FIELDS,
  PRECONDITION_FIELDS,
  PROPOSAL_FIELDS,
  REF_COMPENSATION_FIELDS,
  TOOL_COMPENSATION_FIELDS,
  copyUnknownFields,
} from "./fields.ts";
import { guarded, problemsError, readJsonInput } from "./input.ts";
import { checkProposalActions, checkProposalBytes, type ProposalLimits } from "./limits.ts";
import { EMPTY_LIST, EMPTY_MAP, adoptJson, cloneJson, emptyMap, getOwn, hasKey, isEmptyMap } from "./json.ts";
import { collectOutputRefs, pushOutputRefIds } from "./refs.ts";
import type {
  Action,
  ActionProposal,
  ActionType,
  Compensation,
  FailureBehavior,
  JsonObject,
  JsonValue,
  Precondition,
  Reversibility,
  StateAssumption,
  ToolInvocationMode,
} from "./types.ts";
import { surelyValidProposal } from "./proposal-shape.ts";
import { shapeProblems } from "./validate.ts";
import { refuseUnknownFields, unknownFields } from "./unknown-fields.ts";

export interface ParseOptions {
  /** Source of the default proposal timestamp. */
  clock?: Clock;
  /** Source of default proposal and action ids. */
  ids?: IdGenerator;
  /** Size limits, checked before the proposal is validated; `DEFAULT_PROPOSAL_LIMITS` where absent. */
  limits?: ProposalLimits;
  /**
   * Refuse fields the spec does not name (each a problem with its pointer and
   * a did-you-mean) instead of keeping them for the round trip (DECISIONS §25).
   */
  strict?: boolean;
}

type Raw = Record<string, JsonValue>;

/**
 * How JSON data moves from the input into the IR: `cloneJson` for a caller's
 * value (never alias it), `adoptJson` for our own fresh `JSON.parse` result.
 * Both give prototype-free maps.
 */
type Copy = <T extends JsonValue>(value: T) => T;

function field(raw: Raw, name: string): JsonValue | undefined {
  return getOwn(raw, name);
}

/** A proposal's `context` or a compensation's `parameters`: copied, or a fresh empty map (one per proposal, not shared). */
function mapField(raw: Raw, name: string, copy: Copy): JsonObject {
  const value = field(raw, name);
  return value === undefined ? emptyMap() : copy(value as JsonObject);
}

/** A list of records, each normalized; the shared empty list when absent or empty (no callback made per action). */
function records<T>(value: JsonValue | undefined, normalize: (item: Raw, copy: Copy) => T, copy: Copy): readonly T[] {
  const items = value as Raw[] | undefined;
  if (items === undefined || items.length === 0) return EMPTY_LIST;
  const out: T[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) out[i] = normalize(items[i]!, copy);
  return out;
}

function normalizePrecondition(raw: Raw, copy: Copy): Precondition {
  const out: Precondition = {
    key: raw["key"] as string,
    operator: (field(raw, "operator") as string | undefined) ?? "eq",
    value: copy(field(raw, "value") ?? null),
    description: (field(raw, "description") as string | undefined) ?? "",
  };
  copyUnknownFields(raw, out, PRECONDITION_FIELDS, copy);
  return out;
}

function normalizeAssumption(raw: Raw, copy: Copy): StateAssumption {
  const out: StateAssumption = { key: raw["key"] as string };
  const expected = field(raw, "expected_value");
  if (expected !== undefined) out.expected_value = copy(expected);
  const version = field(raw, "read_version");
  if (version !== undefined) out.read_version = version as number;
  copyUnknownFields(raw, out, ASSUMPTION_FIELDS, copy);
  return out;
}

function normalizeCompensation(raw: Raw, copy: Copy): Compensation {
  if (raw["type"] === "tool") {
    const out: Compensation = { type: "tool", tool: raw["tool"] as string, parameters: mapField(raw, "parameters", copy) };
    copyUnknownFields(raw, out, TOOL_COMPENSATION_FIELDS, copy);
    return out;
  }
  const out: Compensation = { type: "action_ref", action_id: raw["action_id"] as string };
  copyUnknownFields(raw, out, REF_COMPENSATION_FIELDS, copy);
  return out;
}

/** A field list read from the raw action: a copy, or the shared empty list when absent or empty. */
function strings(value: JsonValue | undefined): readonly string[] {
  return value === undefined || (value as string[]).length === 0 ? EMPTY_LIST : (value as string[]).slice();
}

/** A map read from the raw action: copied, or the shared empty map when absent or empty. */
function map(value: JsonValue | undefined, copy: Copy): Readonly<JsonObject> {
  return value === undefined || isEmptyMap(value as JsonObject) ? EMPTY_MAP : copy(value as JsonObject);
}

/**
 * A schema-valid raw action → an `Action` with defaults; `id` is decided by
 * the caller. The raw fields are read in one pass over its own keys (a
 * planner's action names five or six of the nineteen), not looked up one by one.
 */
function normalizeAction(raw: Raw, id: string, copy: Copy): Action {
  let type: JsonValue | undefined;
  let tool: JsonValue | undefined;
  let parameters: JsonValue | undefined;
  let preconditions: JsonValue | undefined;
  let effects: JsonValue | undefined;
  let dependencies: JsonValue | undefined;
  let stateDependencies: JsonValue | undefined;
  let readSet: JsonValue | undefined;
  let writeSet: JsonValue | undefined;
  let assumptions: JsonValue | undefined;
  let mode: JsonValue | undefined;
  let reversibility: JsonValue | undefined;
  let compensation: JsonValue | undefined;
  let idempotent: JsonValue | undefined;
  let maxRetries: JsonValue | undefined;
  let failureBehavior: JsonValue | undefined;
  let timeout: JsonValue | undefined;
  let metadata: JsonValue | undefined;
  let unknown = false;
  for (const key in raw) {
    if (!hasKey(raw, key)) continue;
    const value = raw[key];
    switch (key) {
      case "id":
        break;
      case "type":
        type = value;
        break;
      case "tool":
        tool = value;
        break;
      case "parameters":
        parameters = value;
        break;
      case "preconditions":
        preconditions = value;
        break;
      case "expected_effects":
        effects = value;
        break;
      case "dependencies":
        dependencies = value;
        break;
      case "state_dependencies":
        stateDependencies = value;
        break;
      case "read_set":
        readSet = value;
        break;
      case "write_set":
        writeSet = value;
        break;
      case "assumptions":
        assumptions = value;
        break;
      case "invocation_mode":
        mode = value;
        break;
      case "reversibility":
        reversibility = value;
        break;
      case "compensation":
        compensation = value;
        break;
      case "idempotent":
        idempotent = value;
        break;
      case "max_retries":
        maxRetries = value;
        break;
      case "failure_behavior":
        failureBehavior = value;
        break;
      case "timeout_ms":
        timeout = value;
        break;
      case "metadata":
        metadata = value;
        break;
      default:
        unknown = true;
    }
  }
  const action: Action = {
    id,
    type: type as ActionType,
    parameters: map(parameters, copy),
    preconditions: records(preconditions, normalizePrecondition, copy),
    expected_effects: map(effects, copy),
    dependencies: strings(dependencies),
    state_dependencies: strings(stateDependencies),
    read_set: strings(readSet),
    write_set: strings(writeSet),
    assumptions: records(assumptions, normalizeAssumption, copy),
    invocation_mode: (mode as ToolInvocationMode | undefined) ?? ACTION_DEFAULTS.invocation_mode,
    reversibility: (reversibility as Reversibility | undefined) ?? ACTION_DEFAULTS.reversibility,
    idempotent: (idempotent as boolean | undefined) ?? ACTION_DEFAULTS.idempotent,
    max_retries: (maxRetries as number | undefined) ?? ACTION_DEFAULTS.max_retries,
    failure_behavior: (failureBehavior as FailureBehavior | undefined) ?? ACTION_DEFAULTS.failure_behavior,
    metadata: map(metadata, copy),
    // Last in the literal and deleted when absent (V8 then steps back to the map without it, still fast):
    // set after the literal instead, it would need a property array of its own, 40 B per action.
    tool: tool as string,
  };
  // `null` for an optional field means absent, as serde reads an `Option`.
  if (typeof tool !== "string") delete action.tool;
  if (compensation !== undefined && compensation !== null) action.compensation = normalizeCompensation(compensation as Raw, copy);
  if (typeof timeout === "number") action.timeout_ms = timeout;
  // Unknown fields are kept, after the known ones (a second pass only for an action that has any).
  if (unknown) copyUnknownFields(raw, action, ACTION_FIELDS, copy);
  return action;
}

/**
 * Duplicate explicit ids and dependencies naming no action, read from the raw
 * actions, and the index of the explicit ids (each at its first action) that
 * the graph is then built on, so the ids are hashed once.
 */
function idProblems(rawActions: readonly unknown[]): { indexOf: Map<string, number>; problems: ErrorProblem[] } {
  const indexOf = new Map<string, number>();
  const problems: ErrorProblem[] = [];
  for (let i = 0; i < rawActions.length; i++) {
    const raw = rawActions[i];
    const id = typeof raw === "object" && raw !== null ? getOwn(raw as Raw, "id") : undefined;
    if (typeof id !== "string") continue;
    if (indexOf.has(id)) problems.push({ pointer: `/actions/${i}/id`, message: `duplicate action id '${id}'` });
    else indexOf.set(id, i);
  }
  for (let i = 0; i < rawActions.length; i++) {
    const raw = rawActions[i];
    const deps = typeof raw === "object" && raw !== null ? getOwn(raw as Raw, "dependencies") : undefined;
    if (!Array.isArray(deps)) continue;
    for (let d = 0; d < deps.length; d++) {
      const dep: unknown = deps[d];
      if (typeof dep === "string" && !indexOf.has(dep)) {
        problems.push({ pointer: `/actions/${i}/dependencies/${d}`, message: `unknown action id '${dep}'` });
      }
    }
  }
  return { indexOf, problems };
}

/** `$<id>.output` references whose id is not a transitive dependency (DECISIONS.md §2). */
function refProblems(actions: readonly Action[], graph: DependencyGraph): ErrorProblem[] {
  const problems: ErrorProblem[] = [];
  let ancestry: Ancestry | undefined; // built on the first reference that is not a direct dependency
  const ids: string[] = [];
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    ids.length = 0;
    pushOutputRefIds(action.parameters, ids);
    if (ids.length === 0) continue;
    let bad: Set<string> | undefined;
    for (const id of ids) {
      const j = graph.indexOf.get(id);
      if (j !== undefined && graph.preds[i]!.includes(j)) continue;
      if (j === undefined || !(ancestry ??= new Ancestry(graph)).has(j, i)) (bad ??= new Set()).add(id);
    }
    if (bad === undefined) continue;
    // Only now pay for pointers: walk again, locating each bad reference.
    for (const ref of collectOutputRefs(action.parameters)) {
      if (!bad.has(ref.id)) continue;
      const pointer = `/actions/${i}/parameters${ref.pointer}`;
      problems.push(
        graph.indexOf.has(ref.id)
          ? { pointer, message: `'${ref.id}' is not a dependency of '${action.id}', so its output is not available` }
          : { pointer, message: `reference to the output of unknown action '${ref.id}'` },
      );
    }
  }
  return problems;
}

function invalid(problems: ErrorProblem[]): CarError {
  return problemsError("invalid_proposal", "proposal", problems);
}

/** A fresh id for action `index`, which declared none, never colliding with a declared one; entered in `taken`. */
function freshId(ids: IdGenerator, taken: Map<string, number>, index: number): string {
  for (;;) {
    const id = ids.next();
    if (!taken.has(id)) {
      taken.set(id, index);
      return id;
    }
  }
}

/** A parsed proposal and the dependency graph its validation built. */
export interface ParsedProposal {
  proposal: ActionProposal;
  /** `dependencyEdges(proposal.actions)`, valid while the actions are not changed. */
  graph: DependencyGraph;
}

/** Every pair `parseProposalWithGraph` handed out: only these are trusted as already parsed. */
const issued = new WeakSet<object>();

/**
 * Whether `value` is a pair `parseProposalWithGraph` returned in this
 * process — not data shaped like one, which could carry a forged graph. A
 * consumer given such a pair (the runtime, `verify`) uses it as it is
 * instead of parsing and building the graph again.
 */
export function isParsedProposal(value: unknown): value is ParsedProposal {
  return typeof value === "object" && value !== null && issued.has(value);
}

/**
 * `parseProposal`, also handing back the graph that validation had to build
 * anyway, so a caller that schedules or verifies need not build it again.
 * Pass the pair on as it is (see `isParsedProposal`); it stays valid while
 * the actions are not changed.
 */
export function parseProposalWithGraph(input: unknown, options: ParseOptions = {}): ParsedProposal {
  if (isParsedProposal(input)) {
    // Parsing kept the unknown fields, so a strict caller handed a parsed pair still sees them refused.
    if (options.strict === true) refuseUnknownFields(input.proposal);
    return input;
  }
  return guarded("invalid_proposal", "proposal", () => {
    if (typeof input === "string") checkProposalBytes(input.length, options.limits);
    const raw = readJsonInput(input, "invalid_proposal", "proposal");
    const rawActions = typeof raw === "object" && raw !== null && Array.isArray(getOwn(raw as Raw, "actions")) ? ((raw as Raw)["actions"] as unknown[]) : [];
    checkProposalActions(rawActions.length, options.limits);
    const problems = surelyValidProposal(raw) ? [] : shapeProblems("actionProposal", raw);
    const { indexOf, problems: idIssues } = idProblems(rawActions);
    for (const issue of idIssues) problems.push(issue);
    if (options.strict === true) for (const f of unknownFields(raw)) problems.push({ pointer: f.pointer, message: f.message });
    if (problems.length > 0) throw invalid(problems);

    const ids = options.ids ?? randomIds;
    const copy: Copy = typeof input === "string" ? adoptJson : cloneJson;
    const record = raw as Raw;
    const proposalId = (field(record, "id") as string | undefined) ?? shortId(ids);
    // Fresh ids avoid every declared one (and each other): they join the index of the declared ones.
    const actions: Action[] = new Array(rawActions.length);
    for (let i = 0; i < rawActions.length; i++) {
      const a = rawActions[i] as Raw;
      const id = getOwn(a, "id");
      actions[i] = normalizeAction(a, typeof id === "string" ? id : freshId(ids, indexOf, i), copy);
    }
    let graph: DependencyGraph;
    try {
      graph = edgesOf(actions, indexOf);
    } catch (error) {
      if (error instanceof CarError) throw invalid(error.details.problems ?? [{ pointer: "/actions", message: error.message }]);
      throw error;
    }
    const refIssues = refProblems(actions, graph);
    if (refIssues.length > 0) throw invalid(refIssues);

    const proposal: ActionProposal = {
      id: proposalId,
      source: (field(record, "source") as string | undefined) ?? "unknown",
      timestamp: (field(record, "timestamp") as string | undefined) ?? rfc3339((options.clock ?? systemClock).now()),
      actions,
      context: mapField(record, "context", copy),
    };
    copyUnknownFields(record, proposal, PROPOSAL_FIELDS, copy);
    const parsed = { proposal, graph };
    issued.add(parsed);
    return parsed;
  });
}

/**
 * Parses and validates an ActionProposal (JSON text or an already-parsed
 * value), applying every documented default. Throws `invalid_proposal` with
 * `details.problems` listing every problem as `{ pointer, message }`.
 */
export function parseProposal(input: unknown, options: ParseOptions = {}): ActionProposal {
  return parseProposalWithGraph(input, options).proposal;
}

/**
 * Parses and validates one Action on its own (no graph checks: dependencies
 * and references are only meaningful inside a proposal).
 */
export function parseAction(input: unknown, options: ParseOptions = {}): Action {
  return guarded("invalid_proposal", "action", () => {
    const raw = readJsonInput(input, "invalid_proposal", "action");
    const problems = shapeProblems("action", raw);
    if (problems.length > 0) throw problemsError("invalid_proposal", "action", problems);
    const id = getOwn(raw as Raw, "id");
    const copy: Copy = typeof input === "string" ? adoptJson : cloneJson;
    return normalizeAction(raw as Raw, typeof id === "string" ? id : (options.ids ?? randomIds).next(), copy);
  });
}
