import { describeRuntimeStoreConformance } from "../shared/conformance-suite.ts";
import { sqlite } from "./sqlite-store.ts";
import { tempDatabase } from "./test-database.ts";

describeRuntimeStoreConformance("sqlite", () => {
  const temp = tempDatabase();
  return { durable: true, open: (clock) => sqlite(temp.db, { clock }), dispose: () => temp.remove() };
});
