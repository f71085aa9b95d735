/**
 * A durable store as it would be without dispatch intents: its event log
 * offers no `persist`, so the engine calls tools without writing an intent
 * first. For the benchmark's "without intents" rows and for the test that
 * the store suite fails such a store.
 */

/** `target`'s members bound to it (a class with private fields cannot be called through a proxy), minus those `hidden`. */
function viewOf<T extends object>(target: T, replace: (name: string | symbol) => unknown): T {
  return new Proxy(target, {
    get(t, name) {
      const replaced = replace(name);
      if (replaced !== undefined) return replaced === HIDDEN ? undefined : replaced;
      const value: unknown = Reflect.get(t, name, t);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
    has: (t, name) => replace(name) !== HIDDEN && Reflect.has(t, name),
  });
}

const HIDDEN = Symbol("hidden");

/** `store` with its event log's `persist` hidden (typed structurally: the kit sits below the engine). */
export function withoutIntents<S extends { events: object }>(store: S): S {
  const events = viewOf(store.events, (name) => (name === "persist" ? HIDDEN : undefined));
  return viewOf(store, (name) => (name === "events" ? events : undefined));
}
