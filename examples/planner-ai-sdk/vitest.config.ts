import { defineConfig, mergeConfig } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.ts";

// The workspace resolves its own packages through the `source` export condition. The AI SDK's
// eventsource-parser also publishes a `source` entry (TypeScript), so it is inlined: Vite compiles
// it instead of handing Node a .ts file.
export default mergeConfig(sharedConfig, defineConfig({ test: { server: { deps: { inline: [/eventsource-parser/, /@ai-sdk\//, /node_modules\/ai\//] } } } }));
