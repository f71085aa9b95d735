import { describeRuntimeStoreConformance } from "../../../test/support/store-conformance.ts";
import { sqlite } from "./sqlite-store.ts";
import { tempDatabase } from "./test-database.ts";

describeRuntimeStoreConformance("sqlite", true, () => {
  const temp = tempDatabase();
  return { durable: true, open: (clock) => sqlite(temp.db, { clock }), dispose: () => temp.remove() };
});
