/**
 * A workspace of program tools for `car run` tests: each tool is a real
 * child process that appends its name to `calls.log` — the proof of what
 * fired — and answers `{ ok: <tool> }`. Proposals are written beside it.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PROGRAM = `
import { appendFileSync, readFileSync } from "node:fs";
const call = JSON.parse(readFileSync(0, "utf8"));
appendFileSync(process.argv[2], call.tool + "\\n");
process.stdout.write(JSON.stringify({ ok: call.tool }));
`;

export interface RecordingWorkspace {
  /** The workspace folder (also where `--policies` points: it holds none). */
  readonly root: string;
  /** The `--tools` file naming every tool. */
  readonly toolsFile: string;
  /** `CAR_HOME` inside the workspace. */
  env(): { CAR_HOME: string };
  /** Writes a proposal with these actions; answers its path. */
  proposal(name: string, actions: unknown[]): string;
  /** The tools that fired so far, in order. */
  fired(): string[];
  /** Forgets what fired so far. */
  clearFired(): void;
  remove(): void;
}

export function recordingWorkspace(prefix: string, tools: readonly string[]): RecordingWorkspace {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const calls = join(root, "calls.log");
  const toolsFile = join(root, "tools.json");
  writeFileSync(join(root, "tool.mjs"), PROGRAM);
  const program = { command: [process.execPath, join(root, "tool.mjs"), calls] };
  writeFileSync(toolsFile, JSON.stringify(Object.fromEntries(tools.map((t) => [t, program]))));
  return {
    root,
    toolsFile,
    env: () => ({ CAR_HOME: join(root, "home") }),
    proposal(name, actions) {
      const file = join(root, `${name}.json`);
      writeFileSync(file, JSON.stringify({ id: name, actions }));
      return file;
    },
    fired: () => (existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n").filter(Boolean) : []),
    clearFired: () => rmSync(calls, { force: true }),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
