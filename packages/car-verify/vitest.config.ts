import { defineConfig, mergeConfig } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.ts";

// Builds the addon first when cargo is here (see src/testing.ts).
export default mergeConfig(sharedConfig, defineConfig({ test: { globalSetup: ["./test/setup.ts"], testTimeout: 120_000 } }));
