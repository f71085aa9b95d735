/**
 * The optional native kernels, loaded once. `nativeKernels()` is `undefined`
 * whenever they must not or cannot be used — `CAR_NATIVE=0`, no binary built
 * for this platform (no cargo on the machine), or a binary that fails to load
 * — and callers then take their TypeScript path, which is the reference.
 *
 * The kernels take typed arrays the caller allocated and fill the output ones
 * in place; see src/kernels.rs for what each computes.
 *
 * This entry only loads: building the addon (which spawns cargo) lives behind
 * `@car/native/build`, so a runtime that imports the kernels never loads
 * `node:child_process`.
 */
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { PACKAGE_DIR } from "./paths.ts";

/** The kernels' signatures this loader expects; src/lib.rs exports the same number as `abi`. */
const ABI = 3;

export interface NativeKernels {
  /** Kahn's algorithm over predecessors in CSR form; fills `order`/`level`, returns how many were ordered. */
  levels(predStart: Int32Array, preds: Int32Array, order: Int32Array, level: Int32Array): number;
  /**
   * For each query, 1 in `answers` when action `from[k]` reaches action `to[k]`; the graph as
   * @car/ir's `DependencyGraph.flat` (predecessors by declaration index, CSR; order; levels).
   * `budget`: the edges each query's search may scan before the bitset sweep answers it.
   */
  reach(
    predStart: Int32Array,
    preds: Int32Array,
    order: Int32Array,
    level: Int32Array,
    from: Int32Array,
    to: Int32Array,
    answers: Uint8Array,
    budget: number,
  ): number;
  /** Actions bucketed by interned key id (`keyStart`/`keyIds`, CSR), each bucket in `order`. */
  group(order: Int32Array, keyStart: Int32Array, keyIds: Int32Array, groupStart: Int32Array, members: Int32Array): number;
}

/**
 * `off`: never use the kernels. `auto`: use them above each kernel's size
 * threshold. `always`: use them at every size (the differential tests).
 */
export type NativeMode = "off" | "auto" | "always";

function modeFromEnv(value: string | undefined): NativeMode {
  if (value === "0" || value === "off" || value === "false") return "off";
  if (value === "always") return "always";
  return "auto";
}

let mode: NativeMode = modeFromEnv(process.env["CAR_NATIVE"]);
let loaded: { kernels: NativeKernels | undefined; reason: string } | undefined;

function load(): { kernels: NativeKernels | undefined; reason: string } {
  const prefix = `car-native.${process.platform}-${process.arch}`;
  let files: string[];
  try {
    files = readdirSync(PACKAGE_DIR).filter((f) => f.startsWith(prefix) && f.endsWith(".node"));
  } catch (error) {
    return { kernels: undefined, reason: `cannot list ${PACKAGE_DIR}: ${(error as Error).message}` };
  }
  if (files.length === 0)
    return { kernels: undefined, reason: `no ${prefix}*.node in ${PACKAGE_DIR} (build it with \`pnpm --filter @car/native build:native\`)` };
  const require = createRequire(import.meta.url);
  const errors: string[] = [];
  for (const file of files) {
    try {
      const kernels = require(`${PACKAGE_DIR}${file}`) as NativeKernels & { abi?: number };
      if (kernels.abi === ABI) return { kernels, reason: `loaded ${file}` };
      errors.push(`${file}: built from other sources (abi ${kernels.abi ?? "none"}, this loader needs ${ABI}); rebuild it`);
    } catch (error) {
      errors.push(`${file}: ${(error as Error).message}`);
    }
  }
  return { kernels: undefined, reason: errors.join("; ") };
}

/** Forgets the load result, so a binary built since is picked up (tests, after `buildNative`). */
export function reloadNative(): void {
  loaded = undefined;
}

/** Whether the binary loaded, and why not. Loads it on first call; independent of the mode. */
export function nativeStatus(): { available: boolean; reason: string } {
  loaded ??= load();
  return { available: loaded.kernels !== undefined, reason: loaded.reason };
}

/**
 * The kernels, when the mode allows them, the binary loaded and the work is
 * at least `threshold` (a size measured per kernel by its caller's bench).
 */
export function nativeKernels(size = Number.POSITIVE_INFINITY, threshold = 0): NativeKernels | undefined {
  if (mode === "off") return undefined;
  if (mode === "auto" && size < threshold) return undefined;
  loaded ??= load();
  return loaded.kernels;
}

/** Sets the mode for this process (tests and benches); returns the previous one. */
export function setNativeMode(next: NativeMode): NativeMode {
  const previous = mode;
  mode = next;
  return previous;
}
