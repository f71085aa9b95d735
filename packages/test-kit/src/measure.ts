/** Measuring helpers the benches share. */

/** The full garbage collection `--expose-gc` exposes, run before each timed run; undefined without the flag. */
export const gc = (globalThis as { gc?: () => void }).gc;

/** µs per action of `ms` spread over `n` actions. */
export const usPer = (ms: number, n: number): number => (ms * 1000) / n;
