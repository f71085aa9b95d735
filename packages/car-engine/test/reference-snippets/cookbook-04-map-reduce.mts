// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-04-multi-agent.md § Map-reduce, with the page's agent runner registered
// first (cookbook-04-runner.mts). The harness prints the result as JSON.

// harness:
import "./cookbook-04-runner.mts";

// ---- verbatim from cookbook-04 § Map-reduce (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
import { runMapReduce } from '@car/engine/compat';

const result = await runMapReduce(
  JSON.stringify({ name: 'classifier', role: 'label', model: 'claude-haiku-4-5' }),
  JSON.stringify({ name: 'aggregator', role: 'summarize labels', model: 'claude-sonnet-4-6' }),
  'Label these support tickets by category.',
  JSON.stringify(['ticket A...', 'ticket B...', 'ticket C...']),
);
// ---- end of the verbatim part ----

// harness:
console.log("HARNESS " + result);
