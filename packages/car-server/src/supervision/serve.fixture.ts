/** `car serve` in a process of its own, for tests that need several servers: the arguments are `car serve`'s. */
import { runServe } from "../serve-command.ts";

process.exit(await runServe(process.argv.slice(2)));
