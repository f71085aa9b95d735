import { afterAll, beforeAll } from "vitest";
import { startPostgresCluster } from "../../../test/support/postgres-cluster.ts";
import type { PostgresCluster } from "../../../test/support/postgres-cluster.ts";
import { describeRuntimeStoreConformance } from "../shared/conformance-suite.ts";
import { postgres } from "./index.ts";

let cluster: PostgresCluster;
let databases = 0;
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(() => cluster?.stop());

describeRuntimeStoreConformance("postgres", () => {
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
