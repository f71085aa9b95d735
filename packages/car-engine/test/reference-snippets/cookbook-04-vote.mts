// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-04-multi-agent.md § Vote, with the page's agent runner registered
// first (cookbook-04-runner.mts). The harness prints the result as JSON.

// harness:
import "./cookbook-04-runner.mts";

// ---- verbatim from cookbook-04 § Vote (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
import { runVote } from '@car/engine/compat';

const result = await runVote(
  JSON.stringify([
    { name: 'a', model: 'gpt-5' },
    { name: 'b', model: 'claude-opus-4-7' },
    { name: 'c', model: 'claude-sonnet-4-6' },
  ]),
  'Will this migration corrupt existing rows?',
  null,
  JSON.stringify({ name: 'judge', role: 'pick winner', model: 'gpt-5' }),
);
// ---- end of the verbatim part ----

// harness:
console.log("HARNESS " + result);
