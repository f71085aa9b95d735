/**
 * The token a server admits, and where it is written (issue §5): two servers
 * sharing one CAR_HOME each keep a readable token file, the first one's
 * `auth-token` is never taken from it, a file left by a killed server is
 * taken over, and `CAR_AUTH_TOKEN` sets the token of `car serve`. Each
 * token is proven by a client that reads it from its file and authenticates
 * over a real WebSocket.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CarClient } from "@car/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runServe } from "./serve-command.ts";
import { startServer } from "./server.ts";
import { recordingServeIo } from "../test/test-client.ts";

let carHome: string;
beforeEach(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-token-files-"));
});
afterEach(async () => {
  await rm(carHome, { recursive: true, force: true });
});

const read = async (name: string): Promise<string> => (await readFile(join(carHome, name), "utf8")).trim();

/** Authenticates with the token in `file` and makes one call; throws if the server refuses it. */
async function admits(url: string, file: string): Promise<boolean> {
  const client = await CarClient.connect(url, { token: await read(file) });
  const keys = await client.request("state.keys", {});
  await client.close();
  return Array.isArray(keys);
}

describe("token files", () => {
  it("gives two servers on one CAR_HOME a file each, host tokens too; the first keeps auth-token and host-token", async () => {
    const first = await startServer({ port: 0, carHome });
    const second = await startServer({ port: 0, carHome });
    expect(first.tokenFile).toBe(join(carHome, "auth-token"));
    expect(second.tokenFile).toBe(join(carHome, `auth-token.${second.port}`));
    expect(await read("auth-token")).toBe(first.token);
    expect(await read(`auth-token.${first.port}`)).toBe(first.token);
    expect(await read(`auth-token.${second.port}`)).toBe(second.token);
    expect(await admits(first.url, "auth-token")).toBe(true);
    expect(await admits(second.url, `auth-token.${second.port}`)).toBe(true);
    await expect(CarClient.connect(second.url, { token: await read("auth-token") })).rejects.toMatchObject({ message: "auth failed: token mismatch" });
    // The host tokens follow the same rule: the second server never takes the first one's host-token.
    expect(first.hostTokenFile).toBe(join(carHome, "host-token"));
    expect(second.hostTokenFile).toBe(join(carHome, `host-token.${second.port}`));
    expect(await read("host-token")).toBe(first.hostToken);
    expect(await read(`host-token.${second.port}`)).toBe(second.hostToken);

    await second.close({ graceMs: 0 });
    expect((await readdir(carHome)).sort()).toEqual(["auth-token", `auth-token.${first.port}`, "host-token", `host-token.${first.port}`].sort());
    expect(await read("auth-token")).toBe(first.token);
    await first.close({ graceMs: 0 });
    expect(await readdir(carHome)).toEqual([]);
  });

  it("takes over an auth-token left by a server that no longer runs", async () => {
    await writeFile(join(carHome, "auth-token"), "left-by-a-killed-server\n");
    await writeFile(join(carHome, "auth-token.1"), "another-dead-one\n");
    const server = await startServer({ port: 0, carHome });
    expect(server.tokenFile).toBe(join(carHome, "auth-token"));
    expect(await admits(server.url, "auth-token")).toBe(true);
    await server.close({ graceMs: 0 });
  });
});

describe("CAR_AUTH_TOKEN", () => {
  it("sets the token of car serve, which a client then authenticates with", async () => {
    const io = recordingServeIo(carHome);
    io.env = { CAR_HOME: carHome, CAR_AUTH_TOKEN: "  shared-secret-token \n" };
    const running = runServe(["--port", "0"], io);
    await expect.poll(() => io.out.length).toBeGreaterThanOrEqual(3);
    const url = io.out[0]!.replace("car serve listening on ", "");
    expect(io.out[1]).toBe("auth token: shared-secret-token");
    const client = await CarClient.connect(url, { token: "shared-secret-token" });
    expect(await client.request("state.keys", {})).toEqual([]);
    await client.close();
    expect(await read("auth-token")).toBe("shared-secret-token");
    io.signal("SIGTERM");
    expect(await running).toBe(0);
  });

  it("yields to --token, and is refused when blank or beside --no-auth", async () => {
    const flag = recordingServeIo(carHome);
    flag.env = { CAR_HOME: carHome, CAR_AUTH_TOKEN: "from-env" };
    const running = runServe(["--port", "0", "--token", "from-flag"], flag);
    await expect.poll(() => flag.out.length).toBeGreaterThanOrEqual(2);
    expect(flag.out[1]).toBe("auth token: from-flag");
    flag.signal("SIGTERM");
    expect(await running).toBe(0);

    for (const [env, args, message] of [
      [{ CAR_AUTH_TOKEN: "   " }, ["--port", "0"], "CAR_AUTH_TOKEN is only whitespace"],
      [{ CAR_AUTH_TOKEN: "t" }, ["--port", "0", "--no-auth"], "CAR_AUTH_TOKEN and --no-auth contradict each other"],
      [{ CAR_AUTH_TOKEN: "t", CAR_NO_AUTH: "1" }, ["--port", "0"], "CAR_AUTH_TOKEN and --no-auth contradict each other"],
    ] as const) {
      const bad = recordingServeIo(carHome);
      bad.env = { CAR_HOME: carHome, ...env };
      expect(await runServe([...args], bad)).toBe(2);
      expect(bad.err[0]).toContain(message);
    }
    // An empty value is no value: the server mints its own token.
    const empty = recordingServeIo(carHome);
    empty.env = { CAR_HOME: carHome, CAR_AUTH_TOKEN: "" };
    const minted = runServe(["--port", "0"], empty);
    await expect.poll(() => empty.out.length).toBeGreaterThanOrEqual(2);
    expect(empty.out[1]).toMatch(/^auth token: [\w-]{43}$/);
    empty.signal("SIGTERM");
    expect(await minted).toBe(0);
  });
});
