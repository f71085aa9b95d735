/**
 * The state directory: `CAR_HOME`, or `~/.car` when unset. Operator-wide
 * policies live in `<CAR_HOME>/policies`, the server's token beside them. A
 * relative `CAR_HOME` is refused (as the original does) because it would
 * silently name a different directory from every working directory.
 */
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { CarError } from "@car/ir";

export function resolveCarHome(env: NodeJS.ProcessEnv = process.env): string {
  const value = env["CAR_HOME"];
  if (value === undefined || value === "") return join(homedir(), ".car");
  if (!isAbsolute(value)) {
    throw new CarError("invalid_params", `CAR_HOME must be an absolute path, got '${value}'`);
  }
  return value;
}
