/**
 * Every package's manifest, `exports` map and packed files pass publint in
 * strict mode. turbo builds every package before this test (`^build`), so
 * the `dist/` files the exports point at exist.
 */
import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { publint } from "publint";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dirs = ["packages", "apps"].flatMap((group) => readdirSync(join(root, group)).map((d) => join(root, group, d)));

describe("publint", () => {
  for (const pkgDir of dirs) {
    it(`${pkgDir.slice(root.length + 1)} passes publint --strict`, async () => {
      const { messages } = await publint({ pkgDir, strict: true, pack: "npm" });
      expect(messages.map((m) => `${m.type} ${m.code} ${JSON.stringify(m.path)}`)).toEqual([]);
    }, 120_000);
  }
});
