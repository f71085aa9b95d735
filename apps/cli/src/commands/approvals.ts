/**
 * `car approvals`: the durable approval ledger and per-agent postures in the
 * CAR database. `approve` / `reject` record a decision on an operation's
 * fingerprint (the ledger call `permission.approve` makes); `list` shows
 * postures and the standing grants still in force; `set-posture` sets an
 * agent's posture (for every tier, or one with --tier); `clear-posture`
 * removes it; `revoke` takes a standing grant back, so the next evaluation
 * of that operation asks again; `default` sets the default posture (a
 * preset or one tier) and `get` prints the whole posture policy.
 */
import { CarError, ERROR_CODES, type CarErrorCode } from "@car/ir";
import { type ApprovalOutcome, type ApprovalRecord, isPermissionTier, type PermissionTier, type Posture, tierRank } from "@car/policy";
import type { LedgerEntry, PostureEntry } from "@car/engine";
import { expectPositionals, parseArgs, positiveInteger, usageError } from "@car/server/argv";
import { DEFAULT_POSTURE_KEY, defaultPosture, isPreset, posturePolicy, setDefaultPreset } from "@car/server/postures";
import { databasePath, openCarDatabase, openRuntimeStore, type StoredEventLog, storedEvents } from "@car/server/home";
import { println } from "../io.ts";

export const usage = `Usage: car approvals approve <FINGERPRINT> [--tier TIER] [--by WHO] [--ttl DURATION] [--uses N] [--agent AGENT] [--run RUN_ID] [--reason TEXT] [--db PATH|URL]
       car approvals reject <FINGERPRINT> [--tier TIER] [--by WHO] [--ttl SECONDS] [--reason TEXT] [--db PATH|URL]
       car approvals list [--json] [--db PATH]
       car approvals set-posture <AGENT> <POSTURE> [--tier TIER] [--db PATH]
       car approvals clear-posture <AGENT> [--tier TIER] [--db PATH]
       car approvals revoke <GRANT_ID> [--by WHO] [--db PATH]
       car approvals default <cautious|balanced|trusting> [--db PATH]
       car approvals default <TIER> <POSTURE> [--db PATH]
       car approvals get [--json] [--db PATH]

approve / reject record a decision on the operation with that fingerprint
(the one 'car run' prints when the approval gate stops a proposal, or that
permission.evaluate reports); the same run then passes (or stays refused).
TIER defaults to the tier the gate asked for, found in the audit log; an
approval below what the operation needs does not count. --ttl makes the
decision lapse after DURATION (seconds, or with a unit: 90s, 30m, 1h, 2d;
default: it stands until revoked); --uses lets it admit N executions, then
lapse; --agent makes it apply to that agent's sessions only; --run to one
run (a run_id from the log). With none of these an approval covers its
operation for every run of every agent, as often as it comes, until it is
revoked or a newer decision replaces it. --by names the reviewer (default cli:$USER).

POSTURE is always_allow, require_approval or deny; it refines the permission
tier gate for that agent's actions (for every tier, or only TIER: read_only,
sandbox_edit or full_access). A per-tier posture wins over an every-tier one.
GRANT_ID is a standing grant's id from 'list'.
default sets the posture every agent without one of its own gets (the
server's agent_permissions.set_default): a preset for every tier —
cautious (reads run, edits ask, full_access refused), balanced (reads run,
the rest asks), trusting (reads and edits run, full_access asks; the same
as nothing set) — or one TIER's POSTURE. get prints the whole policy: the
default, each agent's postures and its exact tool overrides. Every change is recorded in
the audit log. The database is --db PATH, default <CAR_HOME>/car.db
(approve and reject also take a postgres:// URL).`;

const POSTURES: readonly Posture[] = ["always_allow", "require_approval", "deny"];

export async function main(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "approve") return decide("approved", rest);
  if (sub === "reject") return decide("rejected", rest);
  if (sub === "list") return list(rest);
  if (sub === "set-posture") return setPosture(rest);
  if (sub === "clear-posture") return clearPosture(rest);
  if (sub === "revoke") return revoke(rest);
  if (sub === "default") return setDefault(rest);
  if (sub === "get") return getPolicy(rest);
  throw usageError(
    sub === undefined
      ? "missing subcommand: approve, reject, list, set-posture, clear-posture, revoke, default or get"
      : `unknown subcommand '${sub}': expected approve, reject, list, set-posture, clear-posture, revoke, default or get`,
  );
}

function tierOption(value: string | undefined): PermissionTier | null {
  if (value === undefined) return null;
  if (!isPermissionTier(value)) throw usageError(`--tier must be read_only, sandbox_edit or full_access, got '${value}'`);
  return value;
}

async function list(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" }, json: { type: "boolean" } });
  expectPositionals(positionals, []);
  const store = await openCarDatabase(databasePath(options.db), { readonly: true });
  let postures: PostureEntry[];
  let grants: LedgerEntry[];
  try {
    postures = store.postures.list();
    grants = await store.approvals.grants(Date.now());
  } finally {
    await store.close();
  }
  if (options.json) {
    println(JSON.stringify({ postures, grants }, null, 2));
    return 0;
  }
  println("Postures:");
  if (postures.length === 0) println("  (none: the tier gate decides for every agent)");
  for (const p of postures) println(`  ${p.agent_id}  ${p.tier ?? "every tier"}  ${p.posture}  (set ${new Date(p.updated_at).toISOString()})`);
  println("Standing grants:");
  if (grants.length === 0) println("  (none)");
  for (const g of grants) {
    const expiry = g.expires_at === null ? "no expiry" : `until ${new Date(g.expires_at).toISOString()}`;
    println(
      `  #${g.id}  ${g.tool ?? "-"}  up to ${g.required_tier}  by ${g.reviewer} at ${new Date(g.decided_at).toISOString()}, ${expiry}  ${g.fingerprint.slice(0, 16)}…`,
    );
  }
  return 0;
}

async function setDefault(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" } });
  if (positionals.length === 0 || positionals.length > 2) throw usageError("expected a preset (cautious, balanced, trusting) or TIER POSTURE");
  const store = await openCarDatabase(databasePath(options.db));
  try {
    if (positionals.length === 1) {
      const preset = positionals[0]!;
      if (!isPreset(preset)) throw usageError(`the preset must be cautious, balanced or trusting, got '${preset}'`);
      await setDefaultPreset(store.postures, preset, Date.now());
    } else {
      const [tierText, posture] = positionals as [string, string];
      const tier = tierOption(tierText)!;
      if (!(POSTURES as readonly string[]).includes(posture)) throw usageError(`POSTURE must be always_allow, require_approval or deny, got '${posture}'`);
      store.postures.set(DEFAULT_POSTURE_KEY, posture as Posture, tier, Date.now());
    }
    const posture = await defaultPosture(store.postures);
    println(
      `default posture: ${Object.entries(posture)
        .map(([tier, mode]) => `${tier} ${mode}`)
        .join(", ")}`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

async function getPolicy(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" }, json: { type: "boolean" } });
  expectPositionals(positionals, []);
  const store = await openCarDatabase(databasePath(options.db), { readonly: true });
  let policy: Awaited<ReturnType<typeof posturePolicy>>;
  try {
    policy = await posturePolicy(store.postures);
  } finally {
    await store.close();
  }
  if (options.json) {
    println(JSON.stringify(policy, null, 2));
    return 0;
  }
  const line = (p: Record<string, unknown>) =>
    Object.entries(p)
      .map(([tier, mode]) => `${tier} ${String(mode)}`)
      .join(", ");
  println(`default: ${line(policy["default"] as Record<string, unknown>)}`);
  const agents = policy["agents"] as Record<string, Record<string, unknown>>;
  for (const [agent, p] of Object.entries(agents)) println(`${agent}: ${line(p)}`);
  const tools = (policy["tool_overrides"] ?? {}) as Record<string, Record<string, { mode: string }>>;
  for (const [agent, byTool] of Object.entries(tools)) for (const [tool, o] of Object.entries(byTool)) println(`${agent} / ${tool}: ${o.mode}`);
  return 0;
}

async function setPosture(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" }, tier: { type: "string" } });
  const [agent, posture] = expectPositionals(positionals, ["AGENT", "POSTURE"]);
  if (!(POSTURES as readonly string[]).includes(posture!)) throw usageError(`POSTURE must be always_allow, require_approval or deny, got '${posture}'`);
  const tier = tierOption(options.tier);
  const store = await openCarDatabase(databasePath(options.db));
  try {
    const entry = store.postures.set(agent!, posture as Posture, tier, Date.now());
    println(`${entry.agent_id}: ${entry.posture} for ${entry.tier ?? "every tier"}`);
    return 0;
  } finally {
    await store.close();
  }
}

async function clearPosture(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" }, tier: { type: "string" } });
  const [agent] = expectPositionals(positionals, ["AGENT"]);
  const tier = tierOption(options.tier);
  const store = await openCarDatabase(databasePath(options.db));
  try {
    const removed = store.postures.clear(agent!, tier);
    println(removed === 0 ? `${agent}: no posture to clear` : `${agent}: posture cleared (${removed} entr${removed === 1 ? "y" : "ies"})`);
    return removed === 0 ? exit("not_found") : 0;
  } finally {
    await store.close();
  }
}

async function revoke(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { db: { type: "string" }, by: { type: "string" } });
  const [idText] = expectPositionals(positionals, ["GRANT_ID"]);
  const id = Number(idText!.replace(/^#/, ""));
  if (!Number.isSafeInteger(id) || id < 1) throw usageError(`GRANT_ID must be a grant number from 'car approvals list', got '${idText}'`);
  const store = await openCarDatabase(databasePath(options.db));
  try {
    const entry = await store.approvals.revoke(id, options.by ?? `cli:${process.env["USER"] ?? "operator"}`, Date.now());
    println(`revoked grant #${entry.id} (${entry.tool ?? entry.fingerprint.slice(0, 16)}): its operation needs approval again`);
    return 0;
  } finally {
    await store.close();
  }
}

/** What the gate asked about this fingerprint last (its `approval_decided` event), with the action's tool. */
async function lastRequest(log: StoredEventLog, fingerprint: string): Promise<{ tier: PermissionTier; action_id?: string; tool?: string } | undefined> {
  const [asked] = await storedEvents(log, { kinds: ["approval_decided"], data_matches: { fingerprint }, order: "desc", limit: 1 });
  const required = asked?.data["required"];
  if (asked === undefined || typeof required !== "string" || !isPermissionTier(required)) return undefined;
  const [received] = await storedEvents(log, { kinds: ["proposal_received"], proposal_id: asked.proposal_id ?? "", order: "desc", limit: 1 });
  const actions = (received?.data["proposal"] as { actions?: { id: string; tool?: string }[] } | undefined)?.actions;
  const tool = actions?.find((a) => a.id === asked.action_id)?.tool;
  return { tier: required, ...(asked.action_id !== undefined ? { action_id: asked.action_id } : {}), ...(tool !== undefined ? { tool } : {}) };
}

async function decide(decision: ApprovalOutcome, args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, {
    db: { type: "string" },
    tier: { type: "string" },
    by: { type: "string" },
    reason: { type: "string" },
    ttl: { type: "string" },
    uses: { type: "string" },
    agent: { type: "string" },
    run: { type: "string" },
  });
  const [fingerprint] = expectPositionals(positionals, ["FINGERPRINT"]);
  if (!/^[0-9a-f]{64}$/.test(fingerprint!)) throw usageError(`FINGERPRINT must be 64 hex digits (as car run prints it), got '${fingerprint}'`);
  const tier = tierOption(options.tier);
  const ttlSeconds = options.ttl === undefined ? undefined : durationSeconds(options.ttl);
  const uses = options.uses === undefined ? undefined : positiveInteger(options.uses, "--uses");
  if (options.agent === "" || options.run === "") throw usageError("--agent and --run need a value");
  const store = await openRuntimeStore(options.db);
  try {
    const asked = await lastRequest(store.events, fingerprint!);
    if (asked === undefined && tier === null) {
      throw new CarError("not_found", `no gated action with fingerprint ${fingerprint} in the audit log: pass --tier to decide on it anyway`);
    }
    if (decision === "approved" && asked !== undefined && tier !== null && tierRank(tier) < tierRank(asked.tier)) {
      throw usageError(`the operation needs ${asked.tier}; an approval at ${tier} would not count`);
    }
    const now = Date.now();
    const record: ApprovalRecord = {
      fingerprint: fingerprint!,
      decision,
      required_tier: tier ?? asked!.tier,
      reviewer: options.by ?? `cli:${process.env["USER"] ?? "operator"}`,
      decided_at: now,
      expires_at: ttlSeconds === undefined ? null : now + ttlSeconds * 1000,
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
      ...(asked?.action_id !== undefined ? { action_id: asked.action_id } : {}),
      ...(asked?.tool !== undefined ? { tool: asked.tool } : {}),
      ...(uses !== undefined ? { uses } : {}),
      ...(options.agent !== undefined ? { agent_id: options.agent } : {}),
      ...(options.run !== undefined ? { run_id: options.run } : {}),
    };
    await store.approvals.record(record);
    const subject = asked?.tool ?? asked?.action_id ?? `${fingerprint!.slice(0, 16)}…`;
    const expiry = record.expires_at === null ? "" : `, until ${new Date(record.expires_at).toISOString()}`;
    const scope = [
      uses !== undefined ? `${uses} use(s)` : "",
      options.agent !== undefined ? `agent ${options.agent} only` : "",
      options.run !== undefined ? `run ${options.run} only` : "",
    ].filter((s) => s !== "");
    println(
      `${decision} ${subject} up to ${record.required_tier} (fingerprint ${fingerprint}) by ${record.reviewer}${expiry}${scope.length > 0 ? `; ${scope.join(", ")}` : ""}`,
    );
    return 0;
  } finally {
    await store.close?.();
  }
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `--ttl`: whole seconds, or a whole number with a unit (`90s`, `30m`, `1h`, `2d`). */
function durationSeconds(value: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(value);
  const seconds = match === null ? Number.NaN : Number(match[1]) * UNIT_SECONDS[match[2] || "s"]!;
  if (!Number.isSafeInteger(seconds) || seconds < 1) throw usageError(`--ttl must be a positive duration such as 3600, 90s, 30m, 1h or 2d, got '${value}'`);
  return seconds;
}

function exit(code: CarErrorCode): number {
  return ERROR_CODES[code].exit;
}
