/**
 * What one client may take from the server. Every connection is assumed
 * hostile: without bounds, one client's huge batch, proposal or stream of
 * registrations holds or exhausts the process every other client shares.
 * Each limit has a default and a `car serve` flag (docs/operating.md: "Limits").
 */
import { CarError } from "@car/ir";
import { type OptionSpecs, usageError } from "./argv.ts";

export interface ServerLimits {
  /** Requests one connection may have in flight at once (a batch counts each of its requests). */
  maxRequestsPerConnection: number;
  /** `proposal.submit` calls one connection may have running at once. */
  maxProposalsPerConnection: number;
  /** `proposal.submit` calls running at once across the server. */
  maxProposalsPerServer: number;
  /** Actions in one proposal. */
  maxActionsPerProposal: number;
  /** Requests in one JSON-RPC batch. */
  maxBatchSize: number;
  /** JSON bytes of tool output one proposal may receive and keep, in all. */
  maxOutputBytesPerProposal: number;
  /** JSON bytes `$id.output` references may put into one proposal's parameters, in all. */
  maxInterpolatedBytesPerProposal: number;
  /** Tools (each with its compiled schemas) registered on one connection. */
  maxToolsPerConnection: number;
  /** Policy rules registered on one connection. */
  maxPoliciesPerConnection: number;
  /** Failed `session.auth` attempts before the connection is closed. */
  maxAuthFailures: number;
  /** Bytes all clients together may make the server hold at once: tool outputs of running proposals, agent answers, state values. */
  maxHeldBytes: number;
  /** The share of `maxHeldBytes` one connection may hold. */
  maxHeldBytesPerConnection: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<ServerLimits> = Object.freeze({
  maxRequestsPerConnection: 256,
  maxProposalsPerConnection: 16,
  maxProposalsPerServer: 256,
  maxActionsPerProposal: 10_000,
  maxBatchSize: 1_000,
  maxOutputBytesPerProposal: 64 * MIB,
  maxInterpolatedBytesPerProposal: 32 * MIB,
  maxToolsPerConnection: 1_000,
  maxPoliciesPerConnection: 1_000,
  maxAuthFailures: 3,
  maxHeldBytes: 256 * MIB,
  maxHeldBytesPerConnection: 64 * MIB,
});

/** `car serve` flag → limit. */
const FLAGS = {
  "max-requests": "maxRequestsPerConnection",
  "max-proposals-per-connection": "maxProposalsPerConnection",
  "max-proposals": "maxProposalsPerServer",
  "max-actions": "maxActionsPerProposal",
  "max-batch": "maxBatchSize",
  "max-output-bytes": "maxOutputBytesPerProposal",
  "max-interpolated-bytes": "maxInterpolatedBytesPerProposal",
  "max-tools": "maxToolsPerConnection",
  "max-policies": "maxPoliciesPerConnection",
  "max-auth-failures": "maxAuthFailures",
  "max-held-bytes": "maxHeldBytes",
  "max-held-bytes-per-connection": "maxHeldBytesPerConnection",
} as const satisfies Record<string, keyof ServerLimits>;

export const LIMIT_OPTION_SPECS = Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: "string" }])) as {
  [F in keyof typeof FLAGS]: { type: "string" };
} satisfies OptionSpecs;

/** The limits the flags set (each a positive integer); the others keep their defaults. */
export function limitsFromFlags(values: Partial<Record<keyof typeof FLAGS, string | undefined>>): Partial<ServerLimits> {
  const out: Partial<ServerLimits> = {};
  for (const [flag, key] of Object.entries(FLAGS) as [keyof typeof FLAGS, keyof ServerLimits][]) {
    const raw = values[flag];
    if (raw === undefined) continue;
    if (!/^[1-9][0-9]*$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw usageError(`--${flag} must be a positive integer, got '${raw}'`);
    out[key] = Number(raw);
  }
  return out;
}

/** What each flag bounds, for `car serve --help`. */
const HELP: Record<keyof typeof FLAGS, string> = {
  "max-requests": "requests in flight per connection",
  "max-proposals-per-connection": "proposals running per connection",
  "max-proposals": "proposals running on the whole server",
  "max-actions": "actions per proposal",
  "max-batch": "requests per JSON-RPC batch",
  "max-output-bytes": "tool output bytes per proposal",
  "max-interpolated-bytes": "bytes $id.output references add per proposal",
  "max-tools": "tools per connection",
  "max-policies": "policy rules per connection",
  "max-auth-failures": "wrong session.auth tokens before hanging up",
  "max-held-bytes": "bytes all clients may make the server hold",
  "max-held-bytes-per-connection": "bytes one connection may make it hold",
};

/** Usage lines for the flags, with their defaults. */
export const LIMITS_USAGE = (Object.entries(FLAGS) as [keyof typeof FLAGS, keyof ServerLimits][])
  .map(([flag, key]) => `  --${flag} <N>`.padEnd(38) + `${HELP[flag]} [default: ${DEFAULT_LIMITS[key]}]`)
  .join("\n");

/** A count that may not pass its limit: the server's proposals in flight, or one connection's. */
export class Slots {
  #used = 0;
  constructor(
    readonly limit: number,
    private readonly what: string,
  ) {}

  /** Takes a slot, or refuses with `rate_limited`; the caller must `release()` it. */
  take(): void {
    if (this.#used >= this.limit)
      throw new CarError("rate_limited", `too many ${this.what}: the limit is ${this.limit}; retry when one finishes`, { limit: this.limit });
    this.#used += 1;
  }

  release(): void {
    this.#used -= 1;
  }

  get used(): number {
    return this.#used;
  }
}
