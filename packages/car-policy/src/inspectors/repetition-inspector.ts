/**
 * Flags an agent repeating itself: the same tool with the same parameters
 * over and over is the signature of a loop, not progress. Stateful — it
 * remembers the last `window` calls — so it belongs on the engine's dispatch
 * path, which sees every call of a session, and not in the policy-check gate,
 * which sees only what a host routes to it.
 */
import { canonicalJson, type JsonValue } from "@car/ir";
import { ALLOW, type InspectionResult, type Inspector } from "./inspector.ts";

export interface RepetitionOptions {
  /** How many recent calls are remembered. Default 10. */
  window?: number;
  /** Identical calls in the window (this one included) that warn. Default 3. */
  warnAt?: number;
  /** Identical calls in the window (this one included) that deny. Default 5. */
  denyAt?: number;
}

export class RepetitionInspector implements Inspector {
  readonly name = "repetition";
  readonly #window: number;
  readonly #warnAt: number;
  readonly #denyAt: number;
  readonly #recent: string[] = [];

  constructor(options: RepetitionOptions = {}) {
    this.#window = Math.max(1, options.window ?? 10);
    this.#warnAt = options.warnAt ?? 3;
    this.#denyAt = options.denyAt ?? 5;
  }

  inspect(tool: string, params: JsonValue): InspectionResult {
    const key = callKey(tool, params);
    this.#recent.push(key);
    if (this.#recent.length > this.#window) this.#recent.shift();
    const count = this.#recent.filter((k) => k === key).length;
    const reason = `the identical call to '${tool}' was made ${count} times in the last ${this.#recent.length} calls`;
    if (count >= this.#denyAt) return { verdict: "deny", reason };
    if (count >= this.#warnAt) return { verdict: "warn", reason };
    return ALLOW;
  }

  /** Forgets every remembered call (a new session, or after a human intervened). */
  reset(): void {
    this.#recent.length = 0;
  }
}

/** Key order must not make two identical calls look different; JSON without a canonical form still gets a key. */
function callKey(tool: string, params: JsonValue): string {
  let body: string;
  try {
    body = canonicalJson(params);
  } catch {
    body = JSON.stringify(params) ?? "";
  }
  return `${tool}\u0000${body}`;
}
