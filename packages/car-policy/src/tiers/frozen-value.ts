/**
 * Deep-frozen values: a resolved `$id.output` is deep-frozen and shared by
 * every action that references it (`resolveOutputRefs`), so what is read
 * from it — its classification signals, its canonical text — can be kept
 * by identity and read once, not once per referencing action. A value
 * qualifies only when it and everything inside it are frozen: a shallow
 * freeze would let an inner object change under a kept reading.
 */
import type { JsonValue } from "@car/ir";

/** Objects found deep-frozen (frozen stays frozen, so an answer never goes stale). */
const DEEP_FROZEN = new WeakSet<object>();

/** `value` is an object (or array) that nothing, at any depth, can change. */
export function isDeepFrozen(value: JsonValue): value is JsonValue & object {
  if (typeof value !== "object" || value === null) return false;
  if (DEEP_FROZEN.has(value)) return true;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (DEEP_FROZEN.has(v)) continue;
    if (!Object.isFrozen(v)) return false;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) if (typeof child === "object" && child !== null) stack.push(child);
  }
  DEEP_FROZEN.add(value);
  return true;
}

/** A cache of what is read from deep-frozen values, by identity: `read` runs once per value. */
export class FrozenReadings<T> {
  readonly #kept = new WeakMap<object, T>();

  /** `read(value)`, kept when `value` is deep-frozen. */
  of(value: JsonValue, read: (value: JsonValue) => T): T {
    if (!isDeepFrozen(value)) return read(value);
    let reading = this.#kept.get(value);
    if (reading === undefined) {
      reading = read(value);
      this.#kept.set(value, reading);
    }
    return reading;
  }
}
