/**
 * `pnpm bench` runs every package's `bench` script through turbo: each must
 * name a script file that exists, or the whole command fails.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

describe("bench scripts", () => {
  it("every package's bench scripts run a file that exists", () => {
    const broken: string[] = [];
    let seen = 0;
    for (const group of ["packages", "apps"]) {
      for (const entry of readdirSync(join(root, group))) {
        const dir = join(root, group, entry);
        const scripts: Record<string, string> = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).scripts ?? {};
        for (const [name, command] of Object.entries(scripts)) {
          if (name !== "bench" && !name.startsWith("bench:")) continue;
          seen++;
          const files = command.split(/\s+/).filter((w) => /\.(ts|mts|js|mjs)$/.test(w));
          if (files.length === 0 || files.some((f) => !existsSync(join(dir, f)))) broken.push(`${group}/${entry}: ${name} = ${command}`);
        }
      }
    }
    expect(seen).toBeGreaterThan(0);
    expect(broken).toEqual([]);
  });
});
