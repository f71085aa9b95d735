/**
 * Runs a tools.json program as a tool: the call JSON
 * `{tool, params, action_id, request_id, timeout_ms, session_id, attempt}` on
 * stdin, the result JSON on stdout. A non-zero exit, output that is not JSON,
 * or `{"error": ...}` is a failure (`"terminal": true` makes it terminal). The
 * program is killed when its time runs out or when the engine aborts the call
 * (the action's timeout, or the proposal aborting): SIGTERM, then SIGKILL if
 * it lingers. With an OS sandbox (`car run` when a policy asks for one) the
 * program runs inside it: network only to the allowed hosts, no writes to a
 * protected path (`src/sandbox/os-sandbox.ts`).
 */
import { spawn } from "node:child_process";
import type { JsonObject, JsonValue } from "@car/ir";
import { readToolAnswer, toolCallOf, type ToolCallContext } from "@car/engine";
import type { OsSandbox } from "../sandbox/os-sandbox.ts";
import type { LoadedTool } from "./loaded-tool.ts";
import type { ProgramTool } from "./program-tools.ts";

/** Output beyond this is refused: a tool result is data, not a log stream. */
const MAX_STDOUT_BYTES = 32 * 1024 * 1024;
const STDERR_TAIL_BYTES = 2048;
const KILL_GRACE_MS = 2000;

export function programTool(tool: ProgramTool, sandbox?: OsSandbox): LoadedTool {
  return { name: tool.name, schema: tool.schema, handler: (params, ctx) => runProgram(tool, params, ctx, sandbox) };
}

export async function runProgram(tool: ProgramTool, params: JsonObject, ctx: ToolCallContext, sandbox?: OsSandbox): Promise<unknown> {
  const call = toolCallOf(tool.name, params, ctx);
  if (sandbox === undefined) return spawnProgram(tool, tool.command, call, ctx);
  // Inside the sandbox the program is a shell line of the runtime's: bwrap, which dies with that shell.
  const line = await sandbox.wrap(tool.command);
  try {
    return await spawnProgram(tool, ["/bin/sh", "-c", line], call, ctx);
  } finally {
    sandbox.done();
  }
}

function spawnProgram(tool: ProgramTool, argv: readonly string[], call: object, ctx: ToolCallContext): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    if (ctx.signal.aborted) {
      reject(new Error(`tool '${tool.name}' was cancelled before it started`));
      return;
    }
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: tool.cwd,
      env: { ...process.env, ...tool.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let stopReason: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;

    const stop = (reason: string) => {
      if (stopReason !== undefined) return;
      stopReason = reason;
      child.kill("SIGTERM");
      killTimer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
      killTimer.unref();
    };
    const deadline = setTimeout(() => stop(`timed out after ${tool.timeout_ms} ms`), tool.timeout_ms);
    const onAbort = () => stop("was cancelled");
    ctx.signal.addEventListener("abort", onAbort, { once: true });

    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > MAX_STDOUT_BYTES) stop(`wrote more than ${MAX_STDOUT_BYTES} bytes of output`);
      else stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
    });
    // A program that exits without reading its input closes the pipe; that is its choice.
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(call));

    const finish = () => {
      clearTimeout(deadline);
      if (killTimer !== undefined) clearTimeout(killTimer);
      ctx.signal.removeEventListener("abort", onAbort);
    };
    child.on("error", (err) => {
      finish();
      reject(new Error(`tool '${tool.name}': cannot run '${tool.command[0]}': ${err.message}`));
    });
    child.on("close", (code, signal) => {
      finish();
      const tail = stderr.trim() === "" ? "" : `: ${stderr.trim()}`;
      if (stopReason !== undefined) {
        reject(new Error(`tool '${tool.name}' ${stopReason}; the program was stopped`));
        return;
      }
      if (code !== 0) {
        reject(new Error(`tool '${tool.name}' exited with ${code === null ? `signal ${signal}` : `code ${code}`}${tail}`));
        return;
      }
      const text = Buffer.concat(stdout).toString("utf8").trim();
      if (text === "") {
        resolvePromise(null);
        return;
      }
      let answer: JsonValue;
      try {
        answer = JSON.parse(text) as JsonValue;
      } catch {
        reject(new Error(`tool '${tool.name}' printed output that is not JSON`));
        return;
      }
      try {
        resolvePromise(readToolAnswer(answer));
      } catch (error) {
        reject(error);
      }
    });
  });
}
