/**
 * The CLI hook loads `@car/policy/gate` on every tool call a host makes, so
 * its cold start matters: the gate's module graph must stay within the rule
 * engine, policy files and the egress guard, and pull no heavy dependency.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ALLOWED_PACKAGES = new Set(["@car/ir", "@car/ir/internal", "smol-toml", "re2js"]);

function importGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)";/gms)) {
      const spec = m[1] as string;
      if (spec.startsWith(".")) visit(join(dirname(file), spec));
      else if (!spec.startsWith("node:")) packages.add(spec);
    }
  };
  visit(entry);
  return { files: [...files].map((f) => relative(SRC, f)), packages: [...packages] };
}

describe("the gate's module graph", () => {
  it("stays small: no tiers, no package index, only light dependencies", () => {
    const { files, packages } = importGraph(join(SRC, "gate", "index.ts"));
    expect(files).toContain("gate/policy-check.ts");
    expect(files.filter((f) => f.startsWith("tiers/") || f === "index.ts" || f.endsWith(".test.ts"))).toEqual([]);
    expect(packages.filter((p) => !ALLOWED_PACKAGES.has(p))).toEqual([]);
  });
});
