/**
 * Who owns which policy rule on a session (DECISIONS.md §19). The rules a
 * session's runtime holds before its client says anything — the operator's
 * `<CAR_HOME>/policies` files and anything the host added — are the
 * operator's: the session sees them, read-only, and can neither remove them
 * nor register a rule under one of their names (removal is by name, so a
 * same-named rule would let `policy.unregister` take the operator's with it).
 * Everything else on the session is what its client registered, and only
 * that it may list as its own and remove.
 */
import { CarError } from "@car/ir";
import type { PolicyEngine, TraceGate } from "@car/policy";

/** How `policy.list` shows an operator rule. */
const OPERATOR_DESCRIPTION = "operator rule (<CAR_HOME>/policies): read-only";

export interface ListedRule {
  name: string;
  description: string;
  /** `operator` (read-only to every session) or `session` (registered by this connection). */
  owner: "operator" | "session";
  read_only: boolean;
}

export class SessionRules {
  readonly #engine: PolicyEngine;
  readonly #trace: TraceGate | undefined;
  readonly #operator: ReadonlySet<string>;
  /** Names this session registered, with what each does. */
  readonly #own = new Map<string, string>();
  /** Rules this session registered (a name registered twice is two rules). */
  #ownRules = 0;

  /** Call once the operator's rules are loaded onto `engine` (and its trace rules onto `trace`), before any client call. */
  constructor(engine: PolicyEngine, trace?: TraceGate) {
    this.#engine = engine;
    this.#trace = trace;
    this.#operator = new Set(this.#names());
  }

  /** Rule names in force: the engine's, then the TraceGate's. */
  #names(): string[] {
    return [...new Set([...this.#engine.names(), ...(this.#trace?.names() ?? [])])];
  }

  /** Refuses a name the operator's rules use: registering it would shadow them. */
  checkName(name: string): void {
    if (this.#operator.has(name)) {
      throw new CarError("invalid_params", `invalid params: the rule name '${name}' belongs to an operator rule; choose another name`, { name });
    }
  }

  /** Records a rule the session registered (after `checkName` and a successful registration). */
  adopt(name: string, description: string): void {
    this.#own.set(name, description);
    this.#ownRules += 1;
  }

  /**
   * Removes the session's own rules named `name`; 0 when it has none. An
   * operator rule's name is `unauthorized`, never a silent 0: the caller
   * should know the rule is still in force.
   */
  remove(name: string): number {
    if (this.#operator.has(name)) {
      throw new CarError("unauthorized", `policy.unregister: '${name}' is an operator rule; a session removes only the rules it registered`, { name });
    }
    if (!this.#own.delete(name)) return 0;
    const removed = this.#engine.unregister(name) + (this.#trace?.unregister(name) ?? 0);
    this.#ownRules -= removed;
    return removed;
  }

  /** Every rule in force on the session, in registration order, each with its owner. */
  list(): ListedRule[] {
    return this.#names().map((name) => {
      const own = this.#own.get(name);
      return own === undefined
        ? { name, description: OPERATOR_DESCRIPTION, owner: "operator", read_only: true }
        : { name, description: own, owner: "session", read_only: false };
    });
  }

  /** How many rules this session registered and still has (for the per-connection limit). */
  get ownCount(): number {
    return this.#ownRules;
  }
}
