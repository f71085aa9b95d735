/**
 * `car serve` from this package's source (run with tsx and
 * `--conditions=source`), for benches that must not need a build.
 */
import { runServe } from "../src/serve-command.ts";

process.exitCode = await runServe(process.argv.slice(2));
