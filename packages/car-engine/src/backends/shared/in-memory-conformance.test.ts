import { describeRuntimeStoreConformance } from "../../../test/support/store-conformance.ts";
import { inMemoryStore } from "../../store/runtime-store.ts";

describeRuntimeStoreConformance("in-memory", false, () => ({
  durable: false,
  open: (clock) => inMemoryStore({ clock }),
  dispose: () => {},
}));
