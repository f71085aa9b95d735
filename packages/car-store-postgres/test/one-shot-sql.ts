/**
 * A statement on its own connection, outside any store: what a tamperer (or
 * another process) does to the database behind the store's back.
 */
import pg from "pg";

export type Sql = (text: string, params?: unknown[]) => Promise<pg.QueryResult>;

export function oneShotSql(url: string): Sql {
  return async (text, params = []) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await client.query(text, params);
    } finally {
      await client.end();
    }
  };
}
