import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBinDir, startPostgresCluster } from "@car/test-kit/postgres-cluster";
import type { PostgresCluster } from "@car/test-kit/postgres-cluster";
import { runStoreCheck, STORE_CHECKS, type StoreHarness } from "@car/conformance/store";
import { postgres } from "./index.ts";

const installed = postgresBinDir() !== undefined;
if (!installed) console.warn("PostgreSQL is not installed (apt-get install postgresql): skipping the PostgreSQL conformance tests");

describe.skipIf(!installed)("postgres", () => {
  let cluster: PostgresCluster;
  let databases = 0;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(() => cluster?.stop());

  const harness = (): StoreHarness => {
    const url = cluster.createDatabase(`conformance_${++databases}`);
    return {
      durable: true,
      open: async (clock) => {
        const store = postgres(url, { clock, poolSize: 2 });
        await store.ready();
        return store;
      },
      dispose: () => {},
    };
  };

  describe("RuntimeStore conformance: postgres", () => {
    for (const check of STORE_CHECKS) {
      it(check.name, async () => {
        const result = await runStoreCheck(check, harness);
        expect(result.error ?? result.reason ?? "").toBe("");
        expect(result.status).toBe("passed");
      });
    }
  });
});
