/**
 * `car serve` loads the SQLite driver only when it runs on SQLite: on
 * `--db :memory:` (and on PostgreSQL, the same path) neither `better-sqlite3`
 * nor its native addon is loaded. Checked on a real `car serve` process: a
 * preloaded probe lists the CommonJS modules in its cache, and Node's
 * diagnostic report lists every shared object it loaded.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAR_NODE_ARGS } from "./run-car.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "car-serve-lazy-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** On SIGUSR2 (after Node writes its report), writes the CommonJS module cache's file names next to the report. */
const PROBE = `process.on("SIGUSR2", () => require("node:fs").writeFileSync(process.env.CAR_PROBE_OUT, JSON.stringify(Object.keys(require("node:module")._cache))));`;

/** Starts `car serve --db <db>`, asks it what it loaded, stops it: the CommonJS modules and the shared objects. */
async function loadedLibraries(name: string, db: string): Promise<string[]> {
  const reports = join(dir, `${name}-reports`);
  await mkdir(reports);
  const probe = join(dir, "probe.cjs");
  await writeFile(probe, PROBE);
  const modules = join(dir, `${name}-modules.json`);
  const child = spawn(
    process.execPath,
    [
      "--require",
      probe,
      "--report-on-signal",
      "--report-signal=SIGUSR2",
      `--report-directory=${reports}`,
      ...CAR_NODE_ARGS,
      "serve",
      "--port",
      "0",
      "--db",
      db,
    ],
    {
      env: { ...process.env, CAR_HOME: join(dir, `${name}-home`), CAR_PROBE_OUT: modules },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  try {
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (out += d));
    await expect.poll(() => /listening on /.test(out) || child.exitCode !== null, { timeout: 30_000 }).toBe(true);
    expect(child.exitCode, out).toBeNull();
    child.kill("SIGUSR2");
    await expect.poll(async () => (await readdir(reports).catch(() => [])).length, { timeout: 10_000 }).toBe(1);
    const file = join(reports, (await readdir(reports))[0]!);
    await expect.poll(async () => (await readFile(file, "utf8")).trim().endsWith("}"), { timeout: 10_000 }).toBe(true);
    await expect.poll(async () => (await readFile(modules, "utf8").catch(() => "")).endsWith("]"), { timeout: 10_000 }).toBe(true);
    const cjs = JSON.parse(await readFile(modules, "utf8")) as string[];
    expect(cjs.length).toBeGreaterThan(0);
    return [...(JSON.parse(await readFile(file, "utf8")).sharedObjects as string[]), ...cjs];
  } finally {
    child.kill("SIGKILL");
  }
}

describe("car serve and the SQLite native module", () => {
  it("does not load better-sqlite3 in memory, and does on a SQLite file", async () => {
    const memory = await loadedLibraries("memory", ":memory:");
    expect(memory.length).toBeGreaterThan(0);
    expect(memory.filter((lib) => /better[-_]sqlite3/.test(lib))).toEqual([]);
    const sqlite = await loadedLibraries("sqlite", join(dir, "car.db"));
    expect(sqlite.some((lib) => lib.endsWith("better_sqlite3.node"))).toBe(true);
    expect(sqlite.some((lib) => lib.includes("better-sqlite3") && lib.endsWith(".js"))).toBe(true);
  }, 90_000);
});
