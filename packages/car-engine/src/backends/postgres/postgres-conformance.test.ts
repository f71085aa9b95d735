import { afterAll, beforeAll, describe } from "vitest";
import { postgresBinDir, startPostgresCluster } from "../../../test/support/postgres-cluster.ts";
import type { PostgresCluster } from "../../../test/support/postgres-cluster.ts";
import { describeRuntimeStoreConformance } from "../../../test/support/store-conformance.ts";
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

  describeRuntimeStoreConformance("postgres", true, () => {
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
  });
});
