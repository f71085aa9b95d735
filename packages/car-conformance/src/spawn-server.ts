/**
 * `--cmd`: start the runtime's server ourselves, learn where it listens,
 * and stop it afterwards. The URL (and a token, when the server prints one)
 * is read from its output — `car serve` prints `listening on ws://…` and
 * `auth token: …` — or, when the caller already gave `--ws`, we wait until
 * that port accepts connections.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";

export interface SpawnedServer {
  url: string;
  /** A token the server printed (`auth token: …` / `token: …`), if any. */
  token?: string;
  /** Everything the server wrote so far (for error messages). */
  output(): string;
  /** Stops the server (SIGTERM to its process group, SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  command: string;
  /** When given, wait for this URL's port instead of parsing the output for one. */
  url?: string;
  /** How long to wait for the server to listen (default 30 s). */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

const URL_PATTERN = /\b(wss?:\/\/[^\s"'<>]+)/;
const TOKEN_PATTERN = /\b(?:auth[ _-])?token:\s*([A-Za-z0-9_\-.~+/=]{8,})/i;

export async function spawnServer(options: SpawnOptions): Promise<SpawnedServer> {
  const child = spawn(options.command, {
    shell: true,
    detached: process.platform !== "win32",
    stdio: ["ignore", "pipe", "pipe"],
    env: options.env ?? process.env,
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const listening = new Promise<{ url: string; token?: string }>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const timer = setTimeout(() => reject(new Error(`the server did not start listening within ${timeoutMs} ms`)), timeoutMs);
    const done = (value: { url: string; token?: string }): void => {
      clearTimeout(timer);
      resolve(value);
    };
    let found = false;
    const onData = (chunk: Buffer): void => {
      if (output.length < 1_000_000) output += chunk.toString();
      if (options.url !== undefined || found) return;
      const url = URL_PATTERN.exec(output)?.[1];
      if (url === undefined) return;
      found = true;
      // The token line may follow the URL line; give it a moment to arrive.
      setTimeout(() => {
        const token = TOKEN_PATTERN.exec(output)?.[1];
        done(token === undefined ? { url } : { url, token });
      }, 100);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (code ${code}) before listening`));
    });
    if (options.url !== undefined) {
      const url = options.url;
      void waitForPort(url, () => child.exitCode !== null).then(() => {
        const token = TOKEN_PATTERN.exec(output)?.[1];
        done(token === undefined ? { url } : { url, token });
      });
    }
  });
  const stop = (graceMs = 5_000): Promise<void> => stopChild(child, exited, graceMs);
  try {
    const where = await listening;
    return { ...where, output: () => output, stop };
  } catch (err) {
    await stop(1_000);
    throw new Error(`${err instanceof Error ? err.message : String(err)}${output.length > 0 ? `; its output:\n${output}` : ""}`);
  }
}

function signal(child: ChildProcess, sig: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, sig);
    else child.kill(sig);
  } catch {
    // Already gone.
  }
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  signal(child, "SIGTERM");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      signal(child, "SIGKILL");
      resolve();
    }, graceMs);
  });
  await Promise.race([exited, killed]);
  clearTimeout(timer);
  await exited;
}

/** Resolves once `url`'s host:port accepts a TCP connection (polling every 100 ms), or never if `gone()`. */
async function waitForPort(url: string, gone: () => boolean): Promise<void> {
  const { hostname, port, protocol } = new URL(url);
  const p = Number(port !== "" ? port : protocol === "wss:" ? 443 : 80);
  const host = hostname.replace(/^\[|\]$/g, "");
  for (;;) {
    if (gone()) return new Promise(() => {});
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ host, port: p }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
