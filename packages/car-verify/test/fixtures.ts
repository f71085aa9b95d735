/** Proposals the tests share, written as the wire JSON a model would send. */
import type { ActionProposal, ToolSchema } from "@car/ir";
import { parseProposal } from "@car/ir";

export function proposal(actions: object[], id = "p1"): ActionProposal {
  return parseProposal({ id, actions });
}

/** The Action example of agent-ir-spec.md, verbatim (comments dropped). */
export const SPEC_ACTION = {
  id: "a1",
  type: "tool_call",
  tool: "deploy",
  parameters: { env: "staging" },
  preconditions: [{ key: "tests_passed", operator: "eq", value: true }],
  expected_effects: { deployed: true },
  state_dependencies: ["build_artifact"],
  invocation_mode: "one_shot",
  reversibility: "compensable",
  compensation: { type: "tool", tool: "rollback_deploy", parameters: { env: "staging" } },
  idempotent: true,
  max_retries: 3,
  failure_behavior: "retry",
  timeout_ms: 30000,
  metadata: { rationale: "..." },
};

/** The ToolSchema example of agent-ir-spec.md, verbatim. */
export const SPEC_DEPLOY_SCHEMA: ToolSchema = {
  name: "deploy",
  source: "user_defined",
  description: "Deploys an artifact to a target environment.",
  parameters: {
    type: "object",
    properties: {
      env: { type: "string", enum: ["staging", "prod"] },
    },
    required: ["env"],
  },
  returns: { type: "object" },
  idempotent: true,
  cache_ttl_secs: 60,
  rate_limit: { max_calls: 5, interval_secs: 60.0 },
};

/** car#622: a deploy gated on `tests_passed`, which the plan's own test run sets to false. */
export const GATED_DEPLOY = [
  { id: "test", type: "tool_call", tool: "run_tests", expected_effects: { tests_passed: false } },
  {
    id: "deploy",
    type: "tool_call",
    tool: "deploy",
    dependencies: ["test"],
    preconditions: [{ key: "tests_passed", operator: "eq", value: true }],
    expected_effects: { deployed: true, release: "v2" },
  },
  { id: "announce", type: "tool_call", tool: "notify", state_dependencies: ["release"], expected_effects: { announced: true } },
  { id: "audit", type: "tool_call", tool: "audit_log", dependencies: ["test"], expected_effects: { audited: true } },
];
