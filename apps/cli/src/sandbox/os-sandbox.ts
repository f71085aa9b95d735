/**
 * The OS sandbox around the commands `car` runs: `@anthropic-ai/sandbox-runtime`
 * (bubblewrap, a network namespace and a filtering proxy on Linux;
 * `sandbox-exec` on macOS), configured from the policy (`sandboxSettings`).
 * It does not read commands, so what the policy reader misses still cannot
 * reach an unlisted host or write a protected path.
 *
 * Where it cannot start (no bubblewrap, socat or ripgrep, an unsupported
 * platform, a kernel that refuses the namespaces), `openSandbox` says so on
 * stderr and returns nothing — commands then run judged by the reader alone —
 * or, when the sandbox is required, throws `SandboxUnavailableError`.
 * Never silently either way.
 */
import { spawnSync } from "node:child_process";
import { CarError } from "@car/ir";
import type { SandboxSettings } from "@car/policy/gate";
import { shellQuote } from "./shell-quote.ts";

/** A policy (or `--sandbox`) requires the sandbox and it cannot start here: nothing runs. */
export class SandboxUnavailableError extends CarError {
  readonly why: string;

  constructor(why: string) {
    super("policy_denied", `the sandbox is required and cannot start here: ${why}`, { sandbox: "unavailable", why });
    this.why = why;
  }
}

export interface OsSandbox {
  /** `argv` as a shell command line that runs it inside the sandbox (spawn it with `shell: true`). */
  wrap(argv: readonly string[]): Promise<string>;
  /** The same for a command line (`sh -c` text). */
  wrapCommand(command: string): Promise<string>;
  /** Call when a wrapped command has exited: clears the mount points it needed once no other is running. */
  done(): void;
  /** Stops the proxies. */
  close(): Promise<void>;
}

type SandboxRuntime = typeof import("@anthropic-ai/sandbox-runtime");

/**
 * Starts the sandbox for `settings`, or returns why it cannot start. One per
 * process: the runtime's proxies are process-wide.
 */
export async function startSandbox(settings: SandboxSettings): Promise<OsSandbox | { unavailable: string }> {
  let runtime: SandboxRuntime;
  try {
    runtime = await import("@anthropic-ai/sandbox-runtime");
  } catch (err) {
    return { unavailable: `@anthropic-ai/sandbox-runtime cannot be loaded (${(err as Error).message})` };
  }
  const { SandboxManager, SandboxRuntimeConfigSchema } = runtime;
  // Windows is the runtime's alpha, with a machine-wide install and an argv-only wrap: not used here.
  if (!["linux", "darwin"].includes(process.platform) || !SandboxManager.isSupportedPlatform()) {
    return { unavailable: `no sandbox for this platform (${process.platform}); car uses it on Linux and macOS` };
  }
  const deps = SandboxManager.checkDependencies();
  if (deps.errors.length > 0) return { unavailable: deps.errors.join("; ") };
  const refused = namespacesRefused();
  if (refused !== undefined) return { unavailable: refused };
  const parsed = SandboxRuntimeConfigSchema.safeParse(settings);
  // The settings come from validated policy files, so a refusal here is a defect, not bad input.
  if (!parsed.success) throw new CarError("internal", `the policy's sandbox settings do not validate: ${parsed.error.message}`);
  try {
    await SandboxManager.initialize(parsed.data);
  } catch (err) {
    await SandboxManager.reset().catch(() => {});
    return { unavailable: (err as Error).message };
  }
  let running = 0;
  const wrapCommand = async (command: string) => {
    const wrapped = await SandboxManager.wrapWithSandbox(command);
    running++;
    return wrapped;
  };
  return {
    wrap: (argv) => wrapCommand(shellQuote(argv)),
    wrapCommand,
    done() {
      running = Math.max(0, running - 1);
      if (running === 0) SandboxManager.cleanupAfterCommand();
    },
    close: () => SandboxManager.reset(),
  };
}

/**
 * Linux: whether bubblewrap can make the namespaces the sandbox needs (a
 * container without them, Ubuntu's AppArmor user-namespace restriction).
 * The runtime only finds out when the command runs, as a failure of the
 * command; asked here, it is a reason to fall back or refuse up front.
 */
function namespacesRefused(): string | undefined {
  if (process.platform !== "linux") return undefined;
  const probe = spawnSync("bwrap", ["--unshare-net", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (probe.status === 0) return undefined;
  const why = (probe.stderr ?? "").trim() || probe.error?.message || `exit ${probe.status ?? probe.signal}`;
  return `bubblewrap cannot create the sandbox's namespaces here (${why})`;
}

/**
 * The sandbox a run asked for: started, or — when it cannot start — a line
 * on stderr and `undefined` (mode `on`) or `SandboxUnavailableError`
 * (mode `required`).
 */
export async function openSandbox(mode: "on" | "required", settings: SandboxSettings, warn: (line: string) => void): Promise<OsSandbox | undefined> {
  const sandbox = await startSandbox(settings);
  if (!("unavailable" in sandbox)) return sandbox;
  if (mode === "required") throw new SandboxUnavailableError(sandbox.unavailable);
  warn(`car: the sandbox cannot start here (${sandbox.unavailable}); commands run without it, judged by the policy reader alone`);
  return undefined;
}
