// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-04-multi-agent.md § Pipeline (sequential, output-passing), with the page's agent runner registered
// first (cookbook-04-runner.mts). The harness prints the result as JSON.

// harness:
import "./cookbook-04-runner.mts";

// ---- verbatim from cookbook-04 § Pipeline (sequential, output-passing) (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
import { runPipeline } from '@car/engine/compat';

const result = await runPipeline(
  JSON.stringify([
    { name: 'gather',  role: 'collect requirements', model: 'gpt-5' },
    { name: 'design',  role: 'propose architecture', model: 'claude-opus-4-7' },
    { name: 'critic',  role: 'find weaknesses',      model: 'claude-sonnet-4-6' },
  ]),
  'Build a deduplication pipeline for our event stream.',
);
// ---- end of the verbatim part ----

// harness:
console.log("HARNESS " + result);
