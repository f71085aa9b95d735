/**
 * Per-context policy sessions (`session.policy.open` / `close`): a
 * connection that drives several agent contexts layers each context's deny
 * rules on top of its global ones. A scoped rule sits in the connection's
 * policy engine like any other, but denies only while a proposal submitted
 * with its `session_id` is running: the proposal runs inside an
 * AsyncLocalStorage scope holding that id, which follows every await of
 * its execution and no other proposal's. Rules only add denials, so the
 * global rules always apply as well.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { CarError } from "@car/ir";
import type { PolicyDefinition } from "@car/engine";
import { describePolicy, type PolicyEngine, type PolicyRule, policyRuleFrom } from "@car/policy";

/** Most policy sessions open at once on one connection. */
export const MAX_POLICY_SESSIONS = 64;

/** The policy session of the proposal running in this async context, if any. */
const activeScope = new AsyncLocalStorage<string>();

interface ScopedRule {
  name: string;
  description: string;
}

export class PolicySessions {
  readonly #open = new Map<string, ScopedRule[]>();

  open(): string {
    if (this.#open.size >= MAX_POLICY_SESSIONS) {
      throw new CarError("budget_exceeded", `this connection has ${MAX_POLICY_SESSIONS} policy sessions open; close one first (session.policy.close)`);
    }
    const id = `psess-${randomBytes(12).toString("base64url")}`;
    this.#open.set(id, []);
    return id;
  }

  /** The open session `id`, or `not_found` (an id of another connection is unknown here). */
  #require(id: string): ScopedRule[] {
    const rules = this.#open.get(id);
    if (rules === undefined)
      throw new CarError("not_found", `policy session '${id.slice(0, 64)}' is not open on this connection (session.policy.open)`, { session_id: id });
    return rules;
  }

  /** Checks that `id` is open (before a proposal runs under it). */
  check(id: string): void {
    this.#require(id);
  }

  /** Registers `def` on `engine`, denying only inside policy session `id`. Trace rules are connection-wide and cannot be scoped. */
  register(engine: PolicyEngine, id: string, def: PolicyDefinition): void {
    const rules = this.#require(id);
    if (def.rule === "trace_rule") throw new CarError("invalid_params", "invalid params: trace rules are connection-wide; omit session_id");
    const inner = policyRuleFrom(def);
    const scoped: PolicyRule = {
      name: engineName(id, def.name),
      ...(inner.tool !== undefined ? { tool: inner.tool } : {}),
      evaluate: (action, state, context) => (activeScope.getStore() === id ? inner.evaluate(action, state, context) : undefined),
    };
    engine.register(scoped);
    rules.push({ name: def.name, description: describePolicy(def) });
  }

  /** Removes the session's rules named `name`; how many. */
  unregister(engine: PolicyEngine, id: string, name: string): number {
    const rules = this.#require(id);
    const kept = rules.filter((r) => r.name !== name);
    this.#open.set(id, kept);
    return rules.length === kept.length ? 0 : engine.unregister(engineName(id, name));
  }

  list(id: string): { name: string; description: string; owner: "session"; read_only: false }[] {
    return this.#require(id).map((r) => ({ ...r, owner: "session", read_only: false }));
  }

  /** Closes `id` and drops every rule scoped to it; false when it was not open. */
  close(engine: PolicyEngine, id: string): boolean {
    const rules = this.#open.get(id);
    if (rules === undefined) return false;
    for (const name of new Set(rules.map((r) => r.name))) engine.unregister(engineName(id, name));
    this.#open.delete(id);
    return true;
  }

  /** How many scoped rules the connection holds (they count against its policy limit). */
  get ruleCount(): number {
    let n = 0;
    for (const rules of this.#open.values()) n += rules.length;
    return n;
  }

  /** Runs `work` (a proposal) with policy session `id` in force, or as is when undefined. */
  static within<T>(id: string | undefined, work: () => Promise<T>): Promise<T> {
    return id === undefined ? work() : activeScope.run(id, work);
  }
}

/** The engine's name for a scoped rule: the session's id before the rule's, so it never collides with a global rule's name. */
function engineName(id: string, name: string): string {
  return `${id}/${name}`;
}
