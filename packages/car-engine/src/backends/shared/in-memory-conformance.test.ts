import { inMemoryStore } from "../../store/runtime-store.ts";
import { describeRuntimeStoreConformance } from "./conformance-suite.ts";

describeRuntimeStoreConformance("in-memory", () => ({
  durable: false,
  open: (clock) => inMemoryStore({ clock }),
  dispose: () => {},
}));
