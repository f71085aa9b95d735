/**
 * `car equivalent`: do two proposals leave the same state behind on each test
 * state? A sampled spot check, not a proof — the output says how many states
 * were probed and where the first difference is.
 */
import { CarError, ERROR_CODES, isJsonObject, type JsonObject } from "@car/ir";
import { equivalentDetailed } from "@car/verify";
import { expectPositionals, parseArgs } from "@car/server/argv";
import { loadProposal } from "../inputs.ts";
import { println, readJson } from "../io.ts";
import { colorEnabled, colors } from "../render/color.ts";

export const usage = `Usage: car equivalent [options] <a.json> <b.json>

Simulates both proposals from each test state and compares the results.
Without --states the probes are {} and {"x": 1, "y": 2}.

Options:
  --states <FILE>  A JSON array of test states (objects)
  --json           Print the report as JSON

Exit status: 0 equivalent on every probe, 1 they differ, 2 bad usage or input.`;

export async function main(args: string[]): Promise<number> {
  const { positionals, options } = parseArgs(args, { states: { type: "string" }, json: { type: "boolean" } });
  const [pathA, pathB] = expectPositionals(positionals, ["a.json", "b.json"]);
  if (pathA === "-" && pathB === "-") throw new CarError("invalid_params", "only one proposal can come from stdin");
  const a = await loadProposal(pathA!);
  const b = await loadProposal(pathB!);
  const states = options.states === undefined ? undefined : await loadStates(options.states);
  const report = equivalentDetailed(a, b, states);
  if (options.json) {
    println(JSON.stringify(report, null, 2));
  } else {
    const c = colors(colorEnabled(process.stdout));
    if (report.equivalent) {
      println(`${c.green("equivalent")} on all ${report.probes} test state${report.probes === 1 ? "" : "s"} (sampled, not proven)`);
    } else {
      const d = report.difference!;
      const show = (v: unknown) => (v === undefined ? "(unset)" : JSON.stringify(v));
      println(
        `${c.red("not equivalent")}: from test state #${d.probe_index} ${JSON.stringify(d.probe)}, key '${d.key}' is ${show(d.left)} after ${pathA} but ${show(d.right)} after ${pathB}`,
      );
    }
  }
  return report.equivalent ? 0 : ERROR_CODES.verification_failed.exit;
}

async function loadStates(path: string): Promise<JsonObject[] | undefined> {
  const doc = await readJson(path, "test states file");
  if (!Array.isArray(doc) || doc.some((s) => !isJsonObject(s))) {
    throw new CarError("invalid_params", `test states file '${path}' must be a JSON array of objects`);
  }
  // An empty list would make "equivalent" vacuously true; it means "use the defaults".
  return doc.length === 0 ? undefined : (doc as JsonObject[]);
}
