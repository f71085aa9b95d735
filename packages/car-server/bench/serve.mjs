/**
 * `car serve` for the server bench: the command itself (`runServe`) from
 * this package's build, in its own Node process. Arguments are `car serve`'s.
 */
import { runServe } from "../dist/index.mjs";

process.exitCode = await runServe(process.argv.slice(2));
