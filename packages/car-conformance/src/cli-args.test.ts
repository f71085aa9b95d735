import { describe, expect, it } from "vitest";
import { parseCliArgs } from "./cli-args.ts";

describe("parseCliArgs", () => {
  it("reads a WebSocket target with a token, filters and reports", () => {
    expect(
      parseCliArgs(["--ws", "ws://127.0.0.1:9100/", "--token", "T", "--capability", "ordering", "--capability", "rollback", "--junit", "out.xml", "--json"]),
    ).toMatchObject({
      ws: "ws://127.0.0.1:9100/",
      token: "T",
      capabilities: ["ordering", "rollback"],
      junit: "out.xml",
      json: "-",
      engine: false,
    });
  });

  it("takes --json FILE and --flag=value forms", () => {
    expect(parseCliArgs(["--engine", "--json", "r.json"]).json).toBe("r.json");
    expect(parseCliArgs(["--cmd=car serve --port 0", "--timeout=5000"])).toMatchObject({ cmd: "car serve --port 0", timeoutMs: 5000 });
  });

  it("refuses no target, two targets, bad URLs and unknown flags", () => {
    expect(() => parseCliArgs([])).toThrow(/choose one target/);
    expect(() => parseCliArgs(["--engine", "--ws", "ws://x:1"])).toThrow(/choose one target/);
    expect(() => parseCliArgs(["--ws", "http://x:1"])).toThrow(/ws:\/\//);
    expect(() => parseCliArgs(["--engine", "--frobnicate"])).toThrow(/unknown argument/);
    expect(() => parseCliArgs(["--ws"])).toThrow(/needs a value/);
    expect(() => parseCliArgs(["--engine", "--timeout", "-1"])).toThrow(/positive integer/);
  });

  it("--cmd may be combined with --ws (wait for that port)", () => {
    expect(parseCliArgs(["--cmd", "server", "--ws", "ws://127.0.0.1:9999/"])).toMatchObject({ cmd: "server", ws: "ws://127.0.0.1:9999/" });
  });
});
