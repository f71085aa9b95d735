import { describe, expect, it } from "vitest";
import {
  dependencyEdges,
  isParsedProposal,
  manualClock,
  parseAction,
  parseProposal,
  parseProposalWithGraph,
  sequentialIds,
  serializeProposal,
  stringifyProposal,
} from "./index.ts";
import type { Action } from "./index.ts";
import { carErrorOf } from "../test/car-error.ts";

function problemsOf(input: unknown): { pointer: string; message: string }[] {
  const error = carErrorOf(() => parseProposal(input));
  expect(error.code).toBe("invalid_proposal");
  return error.details.problems ?? [];
}

describe("parseProposal defaults", () => {
  it("fills every documented default", () => {
    const p = parseProposal('{"actions":[{"type":"tool_call","tool":"t"}]}', { ids: sequentialIds("g"), clock: manualClock(Date.UTC(2026, 4, 2, 12)) });
    expect(p.id).toBe("g1");
    expect(p.source).toBe("unknown");
    expect(p.timestamp).toBe("2026-05-02T12:00:00.000Z");
    expect(p.context).toEqual({});
    const a = p.actions[0]!;
    expect(a).toEqual({
      id: "g2",
      type: "tool_call",
      tool: "t",
      parameters: {},
      preconditions: [],
      expected_effects: {},
      dependencies: [],
      state_dependencies: [],
      read_set: [],
      write_set: [],
      assumptions: [],
      invocation_mode: "one_shot",
      reversibility: "irreversible",
      idempotent: false,
      max_retries: 3,
      failure_behavior: "abort",
      metadata: {},
    });
    expect("compensation" in a).toBe(false);
    expect("timeout_ms" in a).toBe(false);
  });

  it("leaves no tool key on an action without one (absent or null), and keeps a given one", () => {
    const p = parseProposal({
      actions: [
        { id: "a", type: "assertion" },
        { id: "b", type: "assertion", tool: null },
        { id: "c", type: "tool_call", tool: "t", x: 1 },
      ],
    });
    const [a, b, c] = p.actions;
    expect("tool" in a!).toBe(false);
    expect("tool" in b!).toBe(false);
    expect(Object.keys(a!)).not.toContain("tool");
    expect(c!.tool).toBe("t");
    expect(Object.keys(c!).slice(-2)).toEqual(["tool", "x"]);
  });

  it("generates a 12-hex proposal id from a UUIDv4 by default", () => {
    expect(parseProposal({ actions: [] }).id).toMatch(/^[0-9a-f]{12}$/);
  });

  it("defaults a precondition's operator, value and description", () => {
    const p = parseProposal({ actions: [{ id: "a", type: "assertion", preconditions: [{ key: "k" }] }] });
    expect(p.actions[0]!.preconditions[0]).toEqual({ key: "k", operator: "eq", value: null, description: "" });
  });

  it("never lets a generated action id collide with a declared one", () => {
    const p = parseProposal({ actions: [{ type: "assertion" }, { id: "x1", type: "assertion" }] }, { ids: sequentialIds("x") });
    expect(p.actions.map((a) => a.id)).toEqual(["x2", "x1"]);
  });

  it("builds the graph on one index of every id, the generated ones included", () => {
    const { proposal, graph } = parseProposalWithGraph(
      {
        actions: [
          { type: "assertion" },
          { id: "x1", type: "assertion" },
          { type: "assertion", dependencies: ["x1"] },
          { id: "b", type: "assertion", dependencies: ["x1"] },
        ],
      },
      { ids: sequentialIds("x") },
    );
    const ids = proposal.actions.map((a) => a.id);
    expect(ids).toEqual(["x2", "x1", "x3", "b"]);
    expect(graph.indexOf.size).toBe(4);
    const rebuilt = dependencyEdges(proposal.actions);
    expect(graph.preds).toEqual(rebuilt.preds);
    expect(graph.order).toEqual(rebuilt.order);
    expect(ids.map((id) => graph.indexOf.get(id))).toEqual([0, 1, 2, 3]);
  });
});

describe("parseProposal round trip", () => {
  it("keeps unknown fields on the proposal, actions and preconditions", () => {
    const text = JSON.stringify({
      id: "p",
      source: "s",
      timestamp: "2026-05-02T12:00:00Z",
      actions: [{ id: "a", type: "assertion", preconditions: [{ key: "k", operator: "EQ", value: 1, description: "", hint: 2 }], cost: { usd: 1 } }],
      context: {},
      future: [1],
    });
    const p = parseProposal(text);
    const wire = serializeProposal(p);
    expect(wire["future"]).toEqual([1]);
    expect((wire["actions"] as { cost: unknown }[])[0]!.cost).toEqual({ usd: 1 });
    expect(stringifyProposal(parseProposal(stringifyProposal(p)))).toBe(stringifyProposal(p));
  });

  it("keeps __proto__ keys as own data", () => {
    const p = parseProposal(
      '{"actions":[{"id":"a","type":"tool_call","tool":"t","parameters":{"__proto__":{"polluted":true},"constructor":1}}],"__proto__":{"x":1}}',
    );
    const params = p.actions[0]!.parameters;
    expect(Object.keys(params)).toEqual(["__proto__", "constructor"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(stringifyProposal(p)).toContain('"__proto__":{"polluted":true}');
    expect(stringifyProposal(p)).toContain('"__proto__":{"x":1}');
  });
});

describe("parseProposal errors", () => {
  it("lists every problem with its pointer", () => {
    const problems = problemsOf({
      actions: [{ type: "tool_call" }, { id: "x", type: "nope", parameters: [], max_retries: -1 }, { id: "x", type: "state_read", dependencies: ["ghost"] }],
    });
    expect(problems.map((p) => p.pointer)).toEqual([
      "/actions/0/tool",
      "/actions/1/type",
      "/actions/1/parameters",
      "/actions/1/max_retries",
      "/actions/2/id",
      "/actions/2/dependencies/0",
    ]);
  });

  it("names the ids of a cycle", () => {
    const problems = problemsOf({
      actions: [
        { id: "a", type: "assertion", dependencies: ["b"] },
        { id: "b", type: "assertion", dependencies: ["a"] },
      ],
    });
    expect(problems[0]!.message).toMatch(/cycle/);
    expect(problems[0]!.message).toContain("a");
    expect(problems[0]!.message).toContain("b");
  });

  it("rejects $<id>.output references to actions that are not transitive dependencies", () => {
    const ok = parseProposal({
      actions: [
        { id: "a", type: "tool_call", tool: "t" },
        { id: "b", type: "tool_call", tool: "t", dependencies: ["a"] },
        { id: "c", type: "tool_call", tool: "t", parameters: { x: "$a.output.f", y: "text $z.output" }, dependencies: ["b"] },
      ],
    });
    expect(ok.actions).toHaveLength(3);
    const problems = problemsOf({
      actions: [
        { id: "a", type: "tool_call", tool: "t", parameters: { q: ["$b.output"] } },
        { id: "b", type: "tool_call", tool: "t", parameters: { q: "$ghost.output", me: "$b.output" } },
      ],
    });
    expect(problems.map((p) => p.pointer)).toEqual(["/actions/0/parameters/q/0", "/actions/1/parameters/q", "/actions/1/parameters/me"]);
  });

  it("rejects text that is not JSON and values that are not JSON data", () => {
    expect(problemsOf("{")[0]!.message).toMatch(/not valid JSON/);
    expect(problemsOf({ actions: [], context: { f: () => 1 } })[0]!.pointer).toBe("/context/f");
    const cyclic: Record<string, unknown> = { actions: [] };
    cyclic["self"] = cyclic;
    expect(problemsOf(cyclic)[0]!.message).toBe("circular reference");
  });

  it("tells a cycle from a value shared by siblings, at any depth", () => {
    const shared = { n: 1 };
    const siblings = Array.from({ length: 100 }, () => shared);
    expect(parseProposal({ actions: [], context: { siblings } }).context["siblings"]).toEqual(siblings);
    // Past the short path the ancestors are kept in a set: a cycle there is still found, and its pointer is exact.
    let deep: Record<string, unknown> = { shared };
    const root = deep;
    for (let d = 0; d < 80; d++) deep = (deep["c"] = { shared, also: shared }) as Record<string, unknown>;
    expect(parseProposal({ actions: [], context: { root } }).context["root"]).toEqual(root);
    deep["loop"] = root;
    const problems = problemsOf({ actions: [], context: { root } });
    expect(problems).toEqual([{ pointer: `/context/root${"/c".repeat(80)}/loop`, message: "circular reference" }]);
  });

  it("starts every walk from an empty path: after a walk that threw, and inside a walk (a getter that parses)", () => {
    // The walk's ancestor path is reused between parses; a walk cut short by a throwing getter must not leave its path behind.
    const context: Record<string, unknown> = { n: 1 };
    let throwOnce = true;
    Object.defineProperty(context, "boom", {
      enumerable: true,
      get() {
        if (throwOnce) {
          throwOnce = false;
          throw new Error("getter failed");
        }
        return 2;
      },
    });
    const input = { actions: [], context };
    expect(carErrorOf(() => parseProposal(input)).message).toMatch(/getter failed/);
    expect(parseProposal({ actions: [], context: { again: context } }).context["again"]).toEqual({ n: 1, boom: 2 });
    // A getter that parses mid-walk, a value that is on the outer walk's path: the nested walk has a path of its own.
    const mid: Record<string, unknown> = {};
    const outerContext = { mid };
    let calls = 0;
    let nested: unknown;
    Object.defineProperty(mid, "x", {
      enumerable: true,
      get() {
        if (++calls === 1) nested = parseProposal({ actions: [], context: { up: outerContext } }).context["up"];
        return 1;
      },
    });
    expect(parseProposal({ actions: [], context: outerContext }).context).toEqual({ mid: { x: 1 } });
    expect(nested).toEqual({ mid: { x: 1 } });
  });
});

describe("parseProposal robustness", () => {
  it("turns nesting deep enough to exhaust the stack into invalid_proposal", () => {
    const text = `{"actions":[],"context":{"d":${"[".repeat(200_000)}${"]".repeat(200_000)}}}`;
    expect(problemsOf(text)).toHaveLength(1);
  });

  it("reports holes in arrays and merges alternative type errors", () => {
    // eslint-disable-next-line no-sparse-arrays
    // biome-ignore lint/suspicious/noSparseArray: a sparse array is the input under test
    expect(problemsOf({ actions: [, 1] })).toEqual([{ pointer: "/actions/0", message: "not a JSON value (undefined)" }]);
    expect(problemsOf({ actions: [{ type: "tool_call", tool: "t", compensation: 5, timeout_ms: "soon" }] })).toEqual([
      { pointer: "/actions/0/compensation", message: "must be null or object" },
      { pointer: "/actions/0/timeout_ms", message: "must be integer or null" },
    ]);
  });

  it("copies caller data: mutating the input afterwards changes nothing", () => {
    const input = { actions: [{ id: "a", type: "tool_call", tool: "t", parameters: { list: [1] } }] };
    const p = parseProposal(input);
    input.actions[0]!.parameters.list.push(2);
    expect(p.actions[0]!.parameters).toEqual({ list: [1] });
  });
});

describe("parseAction", () => {
  it("parses one action with defaults", () => {
    const a = parseAction('{"type":"state_read","parameters":{"key":"k"}}', { ids: sequentialIds("s") });
    expect(a.id).toBe("s1");
    expect(a.max_retries).toBe(3);
  });
});

describe("maps are prototype-free on both input paths", () => {
  it.each([
    ["text", (v: unknown) => JSON.stringify(v)],
    ["value", (v: unknown) => v],
  ])("from %s", (_name, wrap) => {
    const p = parseProposal(wrap({ actions: [{ id: "a", type: "tool_call", tool: "t", parameters: { nested: { x: [{ y: 1 }] } } }], context: { c: {} } }));
    const params = p.actions[0]!.parameters as Record<string, Record<string, { y: number }[]>>;
    expect(Object.getPrototypeOf(params)).toBeNull();
    expect(Object.getPrototypeOf(params["nested"])).toBeNull();
    expect(Object.getPrototypeOf(params["nested"]!["x"]![0])).toBeNull();
    expect(Object.getPrototypeOf(p.context)).toBeNull();
    expect(params["toString"]).toBeUndefined();
  });
});

describe("empty lists and maps are one frozen value, shared", () => {
  const lists = ["preconditions", "dependencies", "state_dependencies", "read_set", "write_set", "assumptions"] as const;
  const maps = ["parameters", "expected_effects", "metadata"] as const;

  it.each([
    ["text", (v: unknown) => JSON.stringify(v)],
    ["value", (v: unknown) => v],
  ])("from %s: absent and empty fields share one frozen list or map; non-empty ones are the action's own", (_name, wrap) => {
    const p = parseProposal(
      wrap({
        actions: [
          { id: "a", type: "tool_call", tool: "t" },
          { id: "b", type: "tool_call", tool: "t", parameters: {}, dependencies: [], preconditions: [], metadata: {} },
          { id: "c", type: "tool_call", tool: "t", parameters: { x: 1 }, dependencies: ["a"], read_set: ["k"] },
        ],
      }),
    );
    const [a, b, c] = p.actions as [Action, Action, Action];
    for (const field of [...lists, ...maps]) {
      expect(Object.isFrozen(a[field]), field).toBe(true);
      expect(b[field], field).toBe(a[field]);
    }
    expect(Object.getPrototypeOf(a.parameters)).toBeNull();
    // What an action declares is a copy of its own: neither frozen nor shared.
    expect(Object.isFrozen(c.parameters)).toBe(false);
    expect(Object.isFrozen(c.dependencies)).toBe(false);
    expect(c.read_set).not.toBe(b.read_set);
    expect(c.read_set).toEqual(["k"]);
  });

  it("a write into a shared empty throws instead of reaching every other action", () => {
    const p = parseProposal({
      actions: [
        { id: "a", type: "tool_call", tool: "t" },
        { id: "b", type: "tool_call", tool: "t" },
      ],
    });
    const [a, b] = p.actions as [Action, Action];
    expect(() => (a.dependencies as string[]).push("x")).toThrow(TypeError);
    expect(() => {
      (a.expected_effects as Record<string, unknown>)["k"] = 1;
    }).toThrow(TypeError);
    expect(b.dependencies).toEqual([]);
    expect(b.expected_effects).toEqual({});
    // Replacing a list, the way to change a parsed action, is unaffected.
    a.dependencies = ["b"];
    expect(b.dependencies).toEqual([]);
  });

  it("serializes and re-parses to the same proposal", () => {
    const p = parseProposal({ actions: [{ id: "a", type: "state_read", parameters: { key: "k" } }] });
    expect(parseProposal(serializeProposal(p))).toEqual(p);
  });
});
describe("parseProposalWithGraph", () => {
  it("hands back the graph of the parsed actions", () => {
    const text =
      '{"actions":[{"id":"b","type":"tool_call","tool":"t","dependencies":["a"]},{"id":"a","type":"state_write","parameters":{"key":"k","value":1}},{"type":"state_read","parameters":{"key":"k"},"state_dependencies":["k"]}]}';
    const { proposal, graph } = parseProposalWithGraph(text, { ids: sequentialIds("g"), clock: manualClock(0) });
    expect(proposal).toEqual(parseProposal(text, { ids: sequentialIds("g"), clock: manualClock(0) }));
    expect(graph).toEqual(dependencyEdges(proposal.actions));
    expect(graph.ids).toEqual(["b", "a", "g2"]);
  });

  it("passes its own pair through untouched, and trusts nothing merely shaped like one", () => {
    const pair = parseProposalWithGraph('{"actions":[{"id":"a","type":"tool_call","tool":"t"}]}');
    expect(isParsedProposal(pair)).toBe(true);
    expect(parseProposalWithGraph(pair)).toBe(pair);
    for (const lookalike of [{ ...pair }, JSON.parse(JSON.stringify(pair)), pair.proposal, null, "x"]) expect(isParsedProposal(lookalike)).toBe(false);
    // A look-alike is parsed as input like any other: it has no `actions`, so it is refused.
    expect(() => parseProposalWithGraph({ ...pair })).toThrow(expect.objectContaining({ code: "invalid_proposal" }));
  });
});
