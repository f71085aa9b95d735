/**
 * Prepared statements kept per database and SQL text. Preparing compiles the
 * SQL every time; queries whose text depends on their filter (the event
 * log's `query`, `count`) and the chain-anchor read run once per proposal
 * or more, so each distinct text is compiled once. The cache is bounded: a
 * text with an interpolated number (a `LIMIT`) cannot grow it past
 * `MAX_STATEMENTS`, after which it starts over.
 */
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./schema.ts";

const MAX_STATEMENTS = 64;
const caches = new WeakMap<SqliteDatabase, Map<string, Statement>>();

/** `db.prepare(sql)`, compiled once per database and text. */
export function cachedStatement(db: SqliteDatabase, sql: string): Statement {
  let cache = caches.get(db);
  if (cache === undefined) caches.set(db, (cache = new Map()));
  let statement = cache.get(sql);
  if (statement === undefined) {
    if (cache.size >= MAX_STATEMENTS) cache.clear();
    statement = db.prepare(sql);
    cache.set(sql, statement);
  }
  return statement;
}
