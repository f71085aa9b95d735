// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-08-policies.md § deny_tool_callback (NAPI only). The page's `rt` is made
// by the harness. The positional registerPolicy cannot carry a JavaScript
// function, so this call is refused: it throws a CarError at the call
// (synchronously, though the page does not await it), and the module ends there.

// harness:
import { CarRuntime } from "@car/engine/compat";
const rt = new CarRuntime();

// ---- verbatim from cookbook-08 § deny_tool_callback (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
import { registerAgentRunner } from '@car/engine/compat';

// The agent runner doubles as the policy callback host.
registerAgentRunner(async (specJson, task) => { /* ... */ });

rt.registerPolicy('audit_payment', 'deny_tool_callback', 'payment');
// ---- end of the verbatim part ----

// harness:
console.log("HARNESS unreachable: registerPolicy did not throw");
