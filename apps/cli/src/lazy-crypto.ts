/**
 * Stands in for `node:crypto` inside the bundled hook (see tsdown.config.ts).
 * @car/ir reaches it for ids and digests, neither of which the gate's path
 * calls (its synthetic action has a fixed id), yet loading the module costs
 * several milliseconds of every hook run. So it loads on first use. The
 * build fails (missing export) if the bundle ever needs another function.
 */
import { createRequire } from "node:module";

type Crypto = typeof import("node:crypto");

let crypto: Crypto | undefined;

function load(): Crypto {
  crypto ??= createRequire(import.meta.url)("node:crypto") as Crypto;
  return crypto;
}

export const randomUUID: Crypto["randomUUID"] = (options) => load().randomUUID(options);

export const createHash: Crypto["createHash"] = (algorithm, options) => load().createHash(algorithm, options);
