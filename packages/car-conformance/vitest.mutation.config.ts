import { defineConfig, mergeConfig } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.ts";

/** The mutation run's only test command: RuntimeBench's scenarios against the engine, nothing else. */
export default mergeConfig(sharedConfig, defineConfig({ test: { include: ["test/engine.test.ts"], reporters: ["default"] } }));
