/**
 * The CAR home: the state directory, the durable database in it (or the one
 * `--db` names) and the audit key beside it. `car run`, `car audit`,
 * `car approvals` and `car serve` all open them here, so they agree.
 */
export { resolveCarHome } from "./car-home.ts";
export * from "./car-database.ts";
