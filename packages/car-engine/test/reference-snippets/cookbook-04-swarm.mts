// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-04-multi-agent.md § Parallel swarm, with the page's agent runner registered
// first (cookbook-04-runner.mts). The harness prints the result as JSON.

// harness:
import "./cookbook-04-runner.mts";

// ---- verbatim from cookbook-04 § Parallel swarm (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
import { runSwarm } from '@car/engine/compat';

const result = await runSwarm(
  'parallel',
  JSON.stringify([
    { name: 'researcher', role: 'gather facts', model: 'gpt-5' },
    { name: 'critic',     role: 'find weaknesses', model: 'claude-opus-4-7' },
    { name: 'writer',     role: 'compose summary', model: 'claude-sonnet-4-6' },
  ]),
  'Should we move the deploy step before the test step?',
  null,                   // no synthesizer
  null,                   // agent_fn: null means use the stored runner
);
// ---- end of the verbatim part ----

// harness:
console.log("HARNESS " + result);
