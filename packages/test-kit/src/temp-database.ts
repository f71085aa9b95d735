/** A throwaway directory with a `car.db` path in it, one per test; `remove()` deletes it. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TempDir {
  dir: string;
  db: string;
  remove(): void;
}

export function tempDatabase(): TempDir {
  const dir = mkdtempSync(join(tmpdir(), "car-sqlite-"));
  return { dir, db: join(dir, "car.db"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
