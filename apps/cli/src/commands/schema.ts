/**
 * `car schema proposal`: the JSON Schema of an input proposal, shaped for a
 * model's structured-output mode (`proposalInputSchema` from @car/ir). Hand it
 * to the model, then feed what it writes to `car verify` / `car run`.
 */
import { proposalInputSchema } from "@car/ir";
import { expectPositionals, parseArgs, usageError } from "@car/server/argv";
import { println } from "../io.ts";

export const usage = `Usage: car schema proposal

Prints the JSON Schema of an input proposal for a model's structured-output
mode: self-contained, closed objects for the IR's shapes, open maps for tool
parameters and effects; omitted fields take their defaults when parsed.`;

const SCHEMAS = { proposal: proposalInputSchema } as const;

export async function main(args: string[]): Promise<number> {
  const { positionals } = parseArgs(args, {});
  const [name] = expectPositionals(positionals, ["name"]);
  if (!Object.hasOwn(SCHEMAS, name!)) throw usageError(`unknown schema '${name}' (known: ${Object.keys(SCHEMAS).join(", ")})`);
  println(JSON.stringify(SCHEMAS[name as keyof typeof SCHEMAS], null, 2));
  return 0;
}
