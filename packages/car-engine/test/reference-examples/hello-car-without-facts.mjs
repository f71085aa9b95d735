// The reference's examples/node/hello-car.js (node-api.md §11), verbatim except:
//   - the import: the platform-specific native loader (require of a .node file)
//     becomes an import of '@car/engine/compat';
//   - removed, out of this project's scope (memory facts): rt.addFact(...) and
//     rt.factCount() (step "2. Seed a fact").
// hello-car.cjs is the same example with nothing removed (it stops at rt.addFact).
// Run by test/reference-examples.test.ts.
// Minimal CAR example in Node.js.
//
// Prereq: download a platform tarball from this repo's latest release and
// extract. Adjust the require() path below to the matching .node file.
//
//   curl -sL https://github.com/Parslee-ai/car-releases/releases/latest/download/car-darwin-arm64.tar.gz | tar -xz
//
// Or via npm (handles platform resolution automatically):
//   npm install car-runtime
//
// Run:
//   node hello-car.js

import * as compat from "@car/engine/compat";
const loadNative = () => compat;

async function main() {
  const native = loadNative();
  const rt = new native.CarRuntime();

  // 1. Register a tool + a policy.
  await rt.registerTool("echo");
  await rt.registerPolicy("no_rm", "deny_tool_param", "echo", "msg", "rm -rf");

  // 3. Verify.
  const proposal = JSON.stringify({
    actions: [{ id: "a1", type: "tool_call", tool: "echo", parameters: { msg: "hello" }, dependencies: [] }],
  });
  const report = JSON.parse(await rt.verifyProposal(proposal));
  console.log("verify:", report.valid);

  // 4. Execute with a JS tool callback.
  const result = await native.executeProposal(rt, proposal, async (callJson) => {
    const { tool, params } = JSON.parse(callJson);
    console.log(`  [${tool}] echoed: ${params.msg}`);
    return JSON.stringify({ ok: true, echoed: params.msg });
  });

  console.log("result:", JSON.parse(result));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
