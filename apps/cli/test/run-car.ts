/**
 * Runs the real `car` command in a child process: `node` with tsx on
 * `src/car.ts`, resolving workspace packages from source, so every test works
 * from a fresh clone without a build.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
export const TSX_LOADER = pathToFileURL(require.resolve("tsx")).href;
export const CAR_ENTRY = fileURLToPath(new URL("../src/car.ts", import.meta.url));
/** `node` arguments that start the CLI from source. */
export const CAR_NODE_ARGS = ["--import", TSX_LOADER, "--conditions=source", CAR_ENTRY];

export interface CarRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CarRunOptions {
  cwd?: string;
  input?: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

export function runCar(args: readonly string[], options: CarRunOptions = {}): Promise<CarRun> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", FORCE_COLOR: undefined, ...options.env };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    const child = spawn(process.execPath, [...CAR_NODE_ARGS, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: env as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    // Generous: from source (tsx) under a CI machine running every suite at once, a `car` start alone took over 20 s.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`car ${args.join(" ")} did not finish in time\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");
  });
}

/** A `car serve` child process and the URL it printed. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** What it has written to stderr so far. */
  stderr(): string;
}

/**
 * Starts `car serve --port 0 …args` in a child process (`nodeArgs` first,
 * e.g. a heap cap) and resolves once it prints where it listens.
 */
export function startCarServe(nodeArgs: readonly string[], args: readonly string[], env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...nodeArgs, ...CAR_NODE_ARGS, "serve", "--port", "0", ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /listening on (ws:\/\/\S+)/.exec(out);
      if (m) resolve({ child, url: m[1]!, stderr: () => stderr });
    });
    child.once("exit", (code) => reject(new Error(`car serve exited early with ${code}: ${stderr}`)));
  });
}
