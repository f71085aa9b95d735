/**
 * The in-process supervisor the engine adapter offers, on a real Runtime:
 * nobody watching parks nothing; what a watcher is shown carries no
 * parameter value; and it fails closed — a watcher that leaves releases
 * nothing, an undecided intent is denied at the timeout or when the host
 * closes, and deciding an intent that no longer waits is `not_found`.
 */
import fc from "fast-check";
import { Runtime } from "@car/engine";
import { isCarError, type JsonObject } from "@car/ir";
import { describe, expect, it } from "vitest";
import { InProcessSupervision } from "./in-process-supervision.ts";

function host(timeoutMs?: number): { rt: Runtime; sup: InProcessSupervision; calls: string[] } {
  const sup = new InProcessSupervision("sess-1", timeoutMs);
  const rt = new Runtime({ supervisor: sup.supervisor });
  const calls: string[] = [];
  rt.registerTool("read_file", () => {
    calls.push("read_file");
    return "text";
  });
  return { rt, sup, calls };
}

const read = (note: string) => ({ id: "r", type: "tool_call" as const, tool: "read_file", parameters: { path: "notes/a.txt", note } });

/** Submits and resolves with the first intent a watcher (with `filter`) is shown, or null when the proposal ran unparked. */
async function submitWatched(h: ReturnType<typeof host>, id: string, note: string, filter: JsonObject = {}) {
  let shown: (intent: JsonObject) => void = () => {};
  const seen = new Promise<JsonObject>((resolve) => {
    shown = resolve;
  });
  const leave = h.sup.watch(filter, (intent) => shown(intent));
  const result = h.rt.executeProposal({ id, actions: [read(note)] });
  const intent = await Promise.race([seen, result.then(() => null)]);
  return { intent, result, leave };
}

function status(result: { results: { status: string; error?: string | null }[] }): [string, string] {
  return [result.results[0]!.status, result.results[0]!.error ?? ""];
}

describe("InProcessSupervision", () => {
  it("parks nothing when nobody watches, or when the filter does not match", async () => {
    const h = host();
    expect(status(await h.rt.executeProposal({ id: "p0", actions: [read("x")] }))[0]).toBe("succeeded");
    const { intent, result } = await submitWatched(h, "p1", "x", { tools: ["deploy"] });
    expect(intent).toBeNull();
    expect(status(await result)[0]).toBe("succeeded");
    expect(h.calls).toHaveLength(2);
  });

  it("shows key names and a digest, never a parameter value, to the watcher or on the record", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 24 }), async (value) => {
        const secret = `secret-${value}`;
        const h = host();
        const id = `p${++n}`;
        const { intent, result, leave } = await submitWatched(h, id, secret);
        expect(intent).toMatchObject({ proposal_id: id, source: "conn:sess-1", session_id: "sess-1", actions: [{ parameter_keys: ["note", "path"] }] });
        expect(h.sup.pending().map((i) => i["id"])).toEqual([intent!["id"]]);
        h.sup.decide(String(intent!["id"]), { kind: "allow", reviewer: "t" });
        expect(status(await result)[0]).toBe("succeeded");
        leave();
        const shown = JSON.stringify([intent, h.rt.events.query({ kinds: ["supervision_parked", "supervision_decided"] })]);
        expect(shown).not.toContain(JSON.stringify(secret).slice(1, -1));
      }),
      { numRuns: 25 },
    );
  });

  it("a watcher that leaves releases nothing; the host closing denies what still waits", async () => {
    const h = host();
    const { intent, result, leave } = await submitWatched(h, "p1", "x");
    leave();
    expect(h.sup.pending().map((i) => i["id"])).toEqual([intent!["id"]]);
    const raced = await Promise.race([result.then(() => "settled"), new Promise((r) => setTimeout(() => r("still waiting"), 50))]);
    expect(raced).toBe("still waiting");
    h.sup.close();
    expect(status(await result)).toEqual(["rejected", expect.stringContaining("the host closed")]);
    expect(h.sup.pending()).toEqual([]);
    expect(h.calls).toEqual([]);
  });

  it("an intent nobody decides is denied at the timeout; deciding it afterwards is not_found", async () => {
    const h = host(40);
    const { intent, result } = await submitWatched(h, "p1", "x");
    expect(status(await result)).toEqual(["rejected", expect.stringContaining("no supervisor decided within 40 ms")]);
    expect(h.calls).toEqual([]);
    let code: string | undefined;
    try {
      h.sup.decide(String(intent!["id"]), { kind: "allow", reviewer: "late" });
    } catch (err) {
      code = isCarError(err) ? err.code : String(err);
    }
    expect(code).toBe("not_found");
  });

  it("a malformed filter is invalid_params, and no watcher is added", async () => {
    const h = host();
    expect(() => h.sup.watch({ tool: ["x"] }, () => {})).toThrow(/filter\.tool/);
    expect(status(await h.rt.executeProposal({ id: "p1", actions: [read("x")] }))[0]).toBe("succeeded");
  });
});
