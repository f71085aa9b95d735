// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-01-tool-call-and-verify.md, the TypeScript snippet. Nothing stands in
// for anything: the snippet brings its own tool callback. The harness prints
// the verify report and the result as JSON for the test.

// ---- verbatim from cookbook-01 § TypeScript (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
import { CarRuntime, executeProposal } from '@car/engine/compat';

const rt = new CarRuntime();
await rt.registerTool('shell');

const proposal = JSON.stringify({
  actions: [
    {
      id: 'a1',
      type: 'tool_call',
      tool: 'shell',
      parameters: { command: 'echo hello' },
      idempotent: true,
      timeout_ms: 5000,
    },
  ],
});

const check = JSON.parse(await rt.verifyProposal(proposal));
if (!check.valid) {
  throw new Error(`invalid: ${JSON.stringify(check.issues)}`);
}

const result = await executeProposal(rt, proposal, async (callJson) => {
  const { tool, params } = JSON.parse(callJson);
  if (tool === 'shell') {
    // your real shell dispatch here — child_process.execSync, etc.
    return JSON.stringify({ stdout: 'hello\n', stderr: '', code: 0 });
  }
  throw new Error(`unknown tool: ${tool}`);
});

console.log(JSON.parse(result));
// ---- end of the verbatim part ----

// harness:
console.log("HARNESS " + JSON.stringify({ check, result: JSON.parse(result) }));
