import { describe, expect, it } from "vitest";
import { Runtime } from "../runtime.ts";
import { borrowedStore } from "./borrowed-store.ts";
import { inMemoryStore } from "../store/runtime-store.ts";
import type { RuntimeStore } from "../store/runtime-store.ts";

describe("borrowedStore", () => {
  it("lets a runtime commit to the owner's store, and closing the runtime leaves the store open", async () => {
    let closed = 0;
    const owned: RuntimeStore = { ...inMemoryStore(), close: () => void closed++ };
    const first = new Runtime({ store: borrowedStore(owned) });
    const result = await first.executeProposal({ actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] });
    expect(result.results[0]!.status).toBe("succeeded");
    await first.close();
    expect(closed).toBe(0);
    // A second borrower sees the first one's commit in the shared store.
    const second = new Runtime({ store: borrowedStore(owned) });
    expect(second.state.get("k")).toBe(1);
    await second.close();
    expect(closed).toBe(0);
    // The owner's own runtime does close it.
    await new Runtime({ store: owned }).close();
    expect(closed).toBe(1);
  });
});
