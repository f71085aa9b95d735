// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-08-policies.md, its TypeScript snippets in page order in one module,
// all but `deny_tool_callback` (cookbook-08-callback.mts: it throws, by design).
// The page's snippets assume an `rt`; the harness makes one, registers the tools
// the snippets govern, and gives `proposalJson` (which the page leaves to the
// reader) a proposal calling `shell` with `rm -rf /tmp/x`. After the snippets it
// runs that proposal and prints what happened as JSON.

// harness:
import { CarRuntime, executeProposal } from "@car/engine/compat";
const rt = new CarRuntime();
for (const tool of ["shell", "sql", "http", "write_file", "edit_file", "payment"]) await rt.registerTool(tool);
const proposalJson = JSON.stringify({ actions: [{ id: "a3", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /tmp/x" } }] });

// ---- verbatim from cookbook-08 § deny_tool (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
rt.registerPolicy('no_shell', 'deny_tool', 'shell');
// ---- end of the verbatim part ----

// ---- verbatim from cookbook-08 § deny_tool_param (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
rt.registerPolicy('no_rm_rf', 'deny_tool_param', 'shell', 'command', 'rm -rf');
rt.registerPolicy('no_drop_table', 'deny_tool_param', 'sql', 'query', 'DROP TABLE');
rt.registerPolicy('no_force_push', 'deny_tool_param', 'shell', 'command', 'git push --force');
// ---- end of the verbatim part ----

// ---- verbatim from cookbook-08 § require_state (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
rt.registerPolicy(
  'tests_must_pass',
  'require_state',
  null,         // target: not used
  'tests_passed',
  null,         // pattern: not used
  'true',       // value_json: required value, JSON-encoded
);

// Now any action will be denied unless state['tests_passed'] === true.
rt.stateSet('tests_passed', JSON.stringify(true));
// ---- end of the verbatim part ----

// ---- verbatim from cookbook-08 § Verifying policies before running (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
const result = JSON.parse(await rt.verifyProposal(proposalJson));
if (!result.valid) {
  console.log('blocked by policies:', result.issues);
}
// ---- end of the verbatim part ----

// ---- verbatim from cookbook-08 § Policy patterns that show up a lot (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
// Egress: only allow HTTP to specific hosts.
rt.registerPolicy('http_egress', 'deny_tool_param', 'http', 'url', 'http://localhost');
// (more usefully via the InspectorChain)

// Read-only mode for review agents.
rt.registerPolicy('no_writes', 'deny_tool', 'shell');
rt.registerPolicy('no_writes_2', 'deny_tool', 'write_file');
rt.registerPolicy('no_writes_3', 'deny_tool', 'edit_file');

// Approval-gated production deploys.
rt.registerPolicy('prod_approved', 'require_state', null, 'prod_approval', null, 'true');
// ---- end of the verbatim part ----

// harness:
const calls = [];
const run = JSON.parse(await executeProposal(rt, proposalJson, async (callJson) => (calls.push(callJson), "{}")));
console.log(
  "HARNESS " +
    JSON.stringify({
      verifyValid: result.valid,
      policies: JSON.parse(await rt.listPolicies()).map((p) => p.name),
      status: run.results[0].status,
      error: run.results[0].error,
      calls: calls.length,
      state: JSON.parse(rt.stateSnapshot()),
    }),
);
