// Tools for the deploy example: one export per tool. A tool may export a
// `schema` (a CAR ToolSchema) beside its handler; the handler gets the
// call's parameters and a context with an AbortSignal.

export const build = {
  schema: {
    name: "build",
    description: "Builds an artifact for a target.",
    parameters: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
    idempotent: true,
  },
  handler: async ({ target }) => ({ artifact: `${target}.tar.gz` }),
};

export const run_tests = async ({ artifact }) => ({ artifact, passed: 42, failed: 0 });

export const deploy = {
  schema: {
    name: "deploy",
    description: "Deploys an artifact to an environment.",
    parameters: {
      type: "object",
      properties: { env: { type: "string", enum: ["staging", "prod"] }, artifact: { type: "string" } },
      required: ["env", "artifact"],
    },
  },
  handler: async ({ env, artifact }) => ({ deployed: true, env, artifact, url: `https://${env}.example.internal` }),
};

export const rollback_deploy = async ({ env }) => ({ rolled_back: env });
