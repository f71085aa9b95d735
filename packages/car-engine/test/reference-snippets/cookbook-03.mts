// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-03-skills-loop.md, its five TypeScript snippets in page order in one
// module (they share `rt` and `events`). Stand-in: `readTraceEventsFromDisk`,
// which the page leaves to the reader, returns a small hand-written trace of two
// successful build -> deploy episodes in the `engineer` domain (the trace shape
// `distillSkills` reads). No model: `evolveSkills` / `repairSkill` use the
// runtime's deterministic defaults.

// ---- verbatim from cookbook-03 § The full loop (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
import { CarRuntime } from '@car/engine/compat';
const rt = new CarRuntime();

// 1. Ingest a skill the first time it works.
rt.ingestSkill(
  'deploy-staging',
  // code: arbitrary string the agent will use to execute the skill.
  // Could be a shell command, a function name, a JSON spec, etc.
  'pnpm build && pnpm deploy --env staging',
  // platform: where the skill applies.
  'node',
  // persona: which agent role this is for.
  'engineer',
  // url_pattern: when navigating, only match these URLs (use "" for n/a).
  '',
  // task_keywords: terms that should trigger this skill.
  ['deploy', 'release', 'staging', 'ship'],
  // description: one-liner shown to the model when proposing this skill.
  'Deploy the current branch to staging',
);

// 2. Later, find the right skill for the current context.
const found = rt.findSkill(
  'engineer',                    // persona
  '',                            // url
  'ship this branch to staging', // task
  3,                             // top-k
);
const skills = found === 'null' ? [] : JSON.parse(found);
// [{ name, code, platform, description, stats, match_score }, ...]

// 3. Use it. Then record the outcome — this is what makes skills learn.
const skillUsed = skills[0];
let success = true;
try {
  // ... actually run the skill ...
} catch (e) {
  success = false;
}
rt.reportOutcome(skillUsed.name, success ? 'success' : 'fail');
// ---- end of the verbatim part ----

// ---- verbatim from cookbook-03 § Auto-degradation (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
const repaired = await rt.repairSkill('deploy-staging');
// Returns the new code as a string, or null if the skill isn't degraded
// or repair fails. The repaired version is NOT auto-ingested — call
// ingestSkill again with `supersedes: 'deploy-staging'` to commit it.
// ---- end of the verbatim part ----

// ---- verbatim from cookbook-03 § Auto-degradation (batch evolution) (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
const events = await readTraceEventsFromDisk();
const newSkills = await rt.evolveSkills(JSON.stringify(events), 'engineer');
// Generates + ingests fresh skills informed by what just failed.
// ---- end of the verbatim part ----

// ---- verbatim from cookbook-03 § Listing and inspecting (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
const all = JSON.parse(rt.listSkills());
const engineerOnly = JSON.parse(rt.listSkills('engineer'));

// Domains where the average skill quality has dropped:
const needWork = rt.domainsNeedingEvolution(0.6);
// ["browser-automation", "deploy"]
// ---- end of the verbatim part ----

// ---- verbatim from cookbook-03 § Distilling skills from execution traces (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
const distilled = JSON.parse(await rt.distillSkills(JSON.stringify(events)));
const ingestedCount = rt.ingestDistilledSkills(JSON.stringify(distilled));
// ---- end of the verbatim part ----

// harness:
async function readTraceEventsFromDisk() {
  return ["e1", "e2"].flatMap((episode) =>
    ["build", "deploy"].map((tool) => ({ kind: "action_succeeded", tool, data: { episode, domain: "engineer" }, reward: 1 })),
  );
}
const names = (list) => list.map((s) => s.name);
console.log(
  "HARNESS " +
    JSON.stringify({
      found: names(skills),
      stats: JSON.parse(rt.listSkills()).find((s) => s.name === "deploy-staging").stats,
      repaired,
      newSkills: names(JSON.parse(newSkills)),
      all: names(all),
      engineerOnly: names(engineerOnly),
      needWork,
      distilled: names(distilled),
      ingestedCount,
    }),
);
