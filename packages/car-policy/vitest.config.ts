import { defineConfig, mergeConfig } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.ts";

// The corpora's test lives beside their data in corpus/.
export default mergeConfig(sharedConfig, defineConfig({ test: { include: ["src/**/*.test.ts", "test/**/*.test.ts", "corpus/**/*.test.ts"] } }));
