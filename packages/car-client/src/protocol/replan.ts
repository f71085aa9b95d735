/** `replan.set_config`: the session's replan loop (reference websocket-core.md § events / replan). */
import { method } from "./declaration.ts";
import { object } from "./schema.ts";

export const replanMethods = {
  "replan.set_config": method({
    role: "agent",
    summary:
      "Configures this session's replan loop: after a failed run, up to max_replans replacement plans are asked of the client's model (`planner.propose`) and run through admission.",
    params: object(
      {
        /** 0 disables replanning (the default); at most 19. */
        max_replans: { type: "integer", minimum: 0, maximum: 19 },
        /** Pause before each replan request, at most a minute. */
        delay_ms: { type: ["integer", "null"], minimum: 0, maximum: 60000 },
        /** Only `true`: every plan is verified at admission (false is refused, not ignored). */
        verify_before_execute: { type: ["boolean", "null"] },
        /** Rejections (validator, policy, capability) trigger a replan too. */
        replan_on_rejected: { type: ["boolean", "null"] },
      },
      ["max_replans"],
    ),
    result: { type: "null" },
  }),
} as const;
