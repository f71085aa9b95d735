/**
 * Writes one bench proposal's JSON text to a file, for benches that run a
 * check in a process of its own (apps/cli's `bench:verify` times `car verify`
 * on it): `tsx bench/write-proposal.ts <shape> <n> <file>`.
 */
import { writeFileSync } from "node:fs";
import { SHAPES, type Shape } from "./generate.ts";

const [shape, n, file] = process.argv.slice(2);
const generate = SHAPES[shape as Shape];
if (generate === undefined || file === undefined) throw new Error(`usage: write-proposal.ts <${Object.keys(SHAPES).join("|")}> <n> <file>`);
writeFileSync(file, generate(Number(n)));
