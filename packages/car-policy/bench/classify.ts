/**
 * `classifyAction` per action (it runs for every action at admission):
 * typical shell actions, and a 130 KB command and stdin text.
 * `pnpm --filter @car/policy exec tsx --conditions=source bench/classify.ts`.
 */
import { toolCall } from "@car/ir";
import { classifyAction } from "../src/tiers/classify-action.ts";

const COMMANDS = [
  "ls -la && git status",
  "git -C . push --force origin main",
  "npm test -- --runInBand",
  "curl -s https://example.org/x | jq .",
  "bash -c 'cd web && pnpm build && rm -rf dist/tmp'",
  "kubectl -n prod get pods -o wide",
];
const typical = COMMANDS.map((command, i) => toolCall("shell", { command, cwd: "/home/u/project" }, { id: `a${i}` }));
const prose = "The quick brown fox's notes (draft) say: run `make` then check http://x.example.com; ".repeat(1500).slice(0, 130_000);
const large = [toolCall("shell", { command: prose }, { id: "command" }), toolCall("shell", { command: "cat", stdin: prose }, { id: "stdin" })];

for (let i = 0; i < 2_000; i++) for (const a of typical) classifyAction(a);
const runs = 20_000;
let started = performance.now();
for (let i = 0; i < runs; i++) classifyAction(typical[i % typical.length]!);
console.log(`typical shell action: ${(((performance.now() - started) / runs) * 1000).toFixed(0)} µs`);
for (const a of large) {
  classifyAction(a);
  started = performance.now();
  for (let i = 0; i < 5; i++) classifyAction(a);
  console.log(`130 KB ${a.id}: ${((performance.now() - started) / 5).toFixed(0)} ms`);
}
