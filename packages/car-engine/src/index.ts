export * from "./timers.ts";
export * from "./store/state-store.ts";
export { InMemoryStateStore, type InMemoryStateStoreOptions } from "./store/in-memory-state-store.ts";
export { WorkingState, type PendingMutation, type ReadRecord } from "./store/working-state.ts";
export * from "./store/runtime-store.ts";
export * from "./events/event.ts";
export * from "./events/event-log.ts";
export { InMemoryEventLog } from "./events/in-memory-event-log.ts";
