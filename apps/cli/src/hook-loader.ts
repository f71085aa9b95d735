/**
 * Loads the hook bundle (`dist/hook.cjs`) with V8's code cache, for both
 * entries (the bin, src/car-bin.ts, and `car.mjs`, src/car.ts). Most of a cold hook is compiling its JavaScript;
 * the cache — the bytecode of every function the last run compiled — skips
 * that, about 0.09× `node -e 0` (bench/RESULTS.md).
 *
 * The cache (`hook.cjs.v8cache`) is written after a run that had none or
 * whose cache did not fit, so the first hook after a build writes it. Its
 * first line stamps the bundle's size and modification time and Node's
 * version: V8 itself only checks the source's length, so a rebuilt bundle
 * must never meet an old cache. A cache that is missing, stale, corrupt or
 * refused by V8 costs only the compile it would have saved; one that cannot
 * be written (a read-only install) is simply not written.
 */
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname } from "node:path";
import { Script } from "node:vm";

export interface HookModule {
  usage: string;
  main(): Promise<number>;
}

export interface LoadedHook {
  hook: HookModule;
  /** Call once the hook has run: writes the cache when this run compiled without one. */
  afterRun(): void;
}

export function loadHook(file: string): LoadedHook {
  const source = readFileSync(file, "utf8");
  const { size, mtimeMs } = statSync(file);
  const stamp = `car-hook ${size} ${mtimeMs} ${process.version}\n`;
  const cacheFile = `${file}.v8cache`;
  const cachedData = readCache(cacheFile, stamp);
  const script = new Script(Module.wrap(source), { filename: file, ...(cachedData === undefined ? {} : { cachedData }) });
  const module = { exports: {} as HookModule };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dirname(file));
  const compiled = cachedData === undefined || script.cachedDataRejected === true;
  return { hook: module.exports, afterRun: compiled ? () => writeCache(cacheFile, stamp, script.createCachedData()) : () => {} };
}

function readCache(cacheFile: string, stamp: string): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  const header = Buffer.from(stamp);
  return bytes.length > header.length && bytes.subarray(0, header.length).equals(header) ? bytes.subarray(header.length) : undefined;
}

function writeCache(cacheFile: string, stamp: string, data: Buffer): void {
  // Written aside and renamed, so a hook running at the same time reads a whole cache or none.
  const aside = `${cacheFile}.${process.pid}`;
  try {
    writeFileSync(aside, Buffer.concat([Buffer.from(stamp), data]));
    renameSync(aside, cacheFile);
  } catch {
    // A read-only install keeps working, compiling each time.
  }
}
