/**
 * `car serve` for the server bench: the command itself (`runServe`) from
 * this package's build, in its own Node process. Arguments are `car serve`'s.
 */
import { runServe } from "@car/server";

process.exitCode = await runServe(process.argv.slice(2));
