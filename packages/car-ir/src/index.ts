export * from "./types.ts";
export * from "./errors.ts";
export * from "./json.ts";
export * from "./state-sets.ts";
export * from "./precondition.ts";
export * from "./dag.ts";
export * from "./clock.ts";
