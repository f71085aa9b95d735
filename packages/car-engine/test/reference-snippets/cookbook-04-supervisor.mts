// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-04-multi-agent.md § Supervisor, with the page's agent runner registered
// first (cookbook-04-runner.mts). The harness prints the result as JSON.

// harness:
import "./cookbook-04-runner.mts";

// ---- verbatim from cookbook-04 § Supervisor (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
import { runSupervisor } from '@car/engine/compat';

const result = await runSupervisor(
  JSON.stringify([
    { name: 'coder',   role: 'implement', model: 'claude-opus-4-7' },
    { name: 'tester',  role: 'verify',    model: 'claude-sonnet-4-6' },
  ]),
  JSON.stringify({ name: 'lead', role: 'pm', model: 'gpt-5' }),
  'Implement and verify a binary search.',
  3, // max_rounds
);
// ---- end of the verbatim part ----

// harness:
console.log("HARNESS " + result);
