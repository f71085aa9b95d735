/**
 * `@car/store-sqlite/internal`: the file's row format and how the store opens
 * it, for the durable-store benchmark's row floor and for tools that read a
 * store file directly. Not a stable API: it changes with the schema version.
 */
export { openDatabase } from "./schema.ts";
export { COLUMN_COUNT, chainAnchor, type EventRow, eventFromRow, INSERT_COLUMNS, SELECT_COLUMNS } from "./event-row.ts";
