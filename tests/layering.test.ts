/**
 * The dependency chain is ir → verify, policy, client → engine → store-sqlite,
 * store-postgres, conformance → server → cli; the client needs only the IR
 * (its protocol declarations are what the server's method table validates
 * against); the private test kit sits beside verify and only tests and
 * benches may import it.
 * These tests read every package's sources and manifest and fail when a
 * package reaches up (or sideways) the chain, or deep-imports another
 * package's internals instead of its `exports` map.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Layer of each package: a package may depend only on packages of a lower layer. */
const LAYERS: Record<string, number> = {
  "@car/native": -1,
  "@car/ir": 0,
  "@car/verify": 1,
  "@car/policy": 1,
  "@car/test-kit": 1,
  "@car/client": 1,
  "@car/engine": 2,
  "@car/store-sqlite": 3,
  "@car/store-postgres": 3,
  "@car/conformance": 3,
  "@car/server": 4,
  "@car/cli": 5,
};
/**
 * Test-only exceptions (dev dependencies): the store packages run the store
 * suite of `@car/conformance/store`; the PostgreSQL store's race worker and
 * the durable bench compare against SQLite.
 */
const TEST_ONLY_EDGES = new Set([
  "@car/store-sqlite -> @car/conformance",
  "@car/store-postgres -> @car/conformance",
  "@car/store-postgres -> @car/store-sqlite",
]);
/** Private packages only tests and benches may import, and no package may list outside `devDependencies`. */
const TEST_ONLY_PACKAGES = new Set(["@car/test-kit"]);

interface Pkg {
  name: string;
  dir: string;
  manifest: { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; exports?: Record<string, unknown> };
}

function packages(): Pkg[] {
  const out: Pkg[] = [];
  for (const group of ["packages", "apps"]) {
    for (const entry of readdirSync(join(root, group))) {
      const dir = join(root, group, entry);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      out.push({ name: manifest.name, dir, manifest });
    }
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      if (entry === "node_modules" || entry === "dist") continue;
      const p = join(d, entry);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|mts|js|mjs)$/.test(entry)) out.push(p);
    }
  };
  for (const sub of ["src", "bench"]) {
    try {
      walk(join(dir, sub));
    } catch {
      // a package without bench/ is fine
    }
  }
  return out;
}

const IMPORT_RE = /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specs: string[] = [];
  for (const m of text.matchAll(IMPORT_RE)) specs.push((m[1] ?? m[2] ?? m[3])!);
  return specs;
}

function exportedSubpaths(pkg: Pkg): Set<string> {
  return new Set(Object.keys(pkg.manifest.exports ?? { ".": "" }));
}

/** The source file a workspace package's export maps to under the `source` condition. */
function sourceEntry(pkg: Pkg, subpath: string): string {
  const entry = pkg.manifest.exports?.[subpath] as { source?: string } | undefined;
  if (entry?.source === undefined) throw new Error(`${pkg.name} exports no ${subpath} with a source condition`);
  return resolve(pkg.dir, entry.source);
}

/** Every import reached from a package export, following relative and workspace imports, as `file -> specifier`. */
function modulesReachedFrom(name: string, subpath: string): string[] {
  const seen = new Set<string>();
  const reached: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of importsOf(file)) {
      reached.push(`${relative(root, file)} -> ${spec}`);
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
      const m = /^(@car\/[^/]+)(\/.*)?$/.exec(spec);
      const target = m ? byName.get(m[1]!) : undefined;
      if (target) visit(sourceEntry(target, m![2] ? `.${m![2]}` : "."));
    }
  };
  visit(sourceEntry(byName.get(name)!, subpath));
  return reached;
}

const all = packages();
const byName = new Map(all.map((p) => [p.name, p]));

describe("layering", () => {
  it("knows every workspace package", () => {
    expect(all.map((p) => p.name).sort()).toEqual(Object.keys(LAYERS).sort());
  });

  for (const pkg of all) {
    it(`${pkg.name} imports only packages below it, through their exports`, () => {
      const problems: string[] = [];
      for (const file of sourceFiles(pkg.dir)) {
        const isTest = /\.test\.ts$/.test(file) || file.includes(`${pkg.dir}/bench/`);
        for (const spec of importsOf(file)) {
          const where = relative(root, file);
          if (spec.startsWith(".")) {
            const target = resolve(dirname(file), spec);
            if (!target.startsWith(pkg.dir + "/")) problems.push(`${where}: relative import leaves the package: ${spec}`);
            continue;
          }
          const m = /^(@car\/[^/]+)(\/.*)?$/.exec(spec);
          if (!m) continue;
          const [, name, sub] = m as unknown as [string, string, string | undefined];
          if (name === pkg.name) {
            problems.push(`${where}: imports its own package by name: ${spec}`);
            continue;
          }
          const target = byName.get(name);
          if (!target) {
            problems.push(`${where}: unknown workspace package ${name}`);
            continue;
          }
          const edge = `${pkg.name} -> ${name}`;
          if (TEST_ONLY_PACKAGES.has(name) && !isTest) problems.push(`${where}: ${name} is for tests and benches only`);
          const allowedForTest = isTest && TEST_ONLY_EDGES.has(edge);
          if (LAYERS[name]! >= LAYERS[pkg.name]! && !allowedForTest) problems.push(`${where}: ${edge} points up or sideways the chain`);
          const subpath = sub ? `.${sub}` : ".";
          if (!exportedSubpaths(target).has(subpath)) problems.push(`${where}: deep import ${spec} is not in ${name}'s exports map`);
        }
      }
      expect(problems).toEqual([]);
    });

    it(`${pkg.name} declares only dependencies below it`, () => {
      const deps = { ...pkg.manifest.dependencies, ...pkg.manifest.optionalDependencies };
      const bad = Object.keys(deps).filter((d) => d in LAYERS && (LAYERS[d]! >= LAYERS[pkg.name]! || TEST_ONLY_PACKAGES.has(d)));
      expect(bad).toEqual([]);
    });
  }

  it("keeps test helpers private: the test kit is not published, and no shipped package exports a file of its tests", () => {
    for (const name of TEST_ONLY_PACKAGES) expect(byName.get(name)?.manifest).toMatchObject({ private: true });
    const targets = (value: unknown): string[] =>
      typeof value === "string" ? [value] : value !== null && typeof value === "object" ? Object.values(value).flatMap(targets) : [];
    const shipped = all.filter((p) => !(p.manifest as { private?: boolean }).private);
    const intoTests = shipped.flatMap((p) =>
      targets(p.manifest.exports ?? {})
        .filter((t) => /(^|\/)test\/|\.test\.ts$/.test(t))
        .map((t) => `${p.name}: ${t}`),
    );
    expect(intoTests).toEqual([]);
  });

  it("@car/client depends on the IR alone among the workspace packages", () => {
    const client = byName.get("@car/client")!;
    const deps = Object.keys({ ...client.manifest.dependencies, ...client.manifest.optionalDependencies }).filter((d) => d in LAYERS);
    expect(deps).toEqual(["@car/ir"]);
  });

  it("@car/engine pulls in no database driver: better-sqlite3 and pg come with the store packages", () => {
    const DRIVERS = ["better-sqlite3", "pg"];
    const runtimeDeps = (p: Pkg): string[] => Object.keys({ ...p.manifest.dependencies, ...p.manifest.optionalDependencies });
    const external = new Set<string>();
    const seen = new Set<string>();
    const walk = (name: string): void => {
      if (seen.has(name)) return;
      seen.add(name);
      for (const dep of runtimeDeps(byName.get(name)!)) byName.has(dep) ? walk(dep) : external.add(dep);
    };
    walk("@car/engine");
    expect(DRIVERS.filter((d) => external.has(d))).toEqual([]);
    const engine = byName.get("@car/engine")!;
    const importers = sourceFiles(engine.dir).filter((f) => importsOf(f).some((spec) => DRIVERS.includes(spec)));
    expect(importers.map((f) => relative(root, f))).toEqual([]);
    expect(runtimeDeps(byName.get("@car/store-sqlite")!)).toContain("better-sqlite3");
    expect(runtimeDeps(byName.get("@car/store-postgres")!)).toContain("pg");
  });

  // The runtime entries of the IR and the native loader must not bring in build helpers (cargo runs behind `@car/native/build`).
  for (const [name, subpath] of [
    ["@car/ir", "."],
    ["@car/ir", "./internal"],
    ["@car/native", "."],
  ] as const) {
    it(`${name}${subpath.slice(1)} loads no node:child_process`, () => {
      expect(modulesReachedFrom(name, subpath).filter((m) => m.includes("node:child_process"))).toEqual([]);
    });
  }

  it("sees node:child_process through @car/native/build (positive control)", () => {
    expect(modulesReachedFrom("@car/native", "./build").some((m) => m.endsWith("-> node:child_process"))).toBe(true);
  });

  it("catches an upward import (positive control)", () => {
    const fake = "import { Runtime } from \"@car/engine\";\nimport { x } from '@car/ir/src/dag.ts';\n";
    const specs = [...fake.matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2] ?? m[3]);
    expect(specs).toEqual(["@car/engine", "@car/ir/src/dag.ts"]);
    expect(LAYERS["@car/engine"]! >= LAYERS["@car/ir"]!).toBe(true);
    expect(exportedSubpaths(byName.get("@car/ir")!).has("./src/dag.ts")).toBe(false);
  });
});
