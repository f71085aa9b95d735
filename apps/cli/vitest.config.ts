import { mergeConfig } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.ts";

/**
 * The CLI's tests spawn real `car` processes, several in a row per test, on a
 * machine the other packages' suites share: a timeout here guards against a
 * hang, not a slow start, so it is generous.
 */
export default mergeConfig(sharedConfig, { test: { testTimeout: 240_000 } });
