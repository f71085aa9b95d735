/**
 * Vitest global setup: builds @car/native first when cargo is here. Global
 * setup files are not resolved with the `source` condition, so the package's
 * TypeScript entry is located through its package.json.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export default async function setup(): Promise<void> {
  const dir = dirname(createRequire(import.meta.url).resolve("@car/native/package.json"));
  const testing = (await import(join(dir, "src", "testing.ts"))) as typeof import("@car/native/testing");
  testing.setupNative();
}
