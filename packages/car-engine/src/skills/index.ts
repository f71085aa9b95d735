export type {
  DistilledSkill,
  DistilledSkillInput,
  SkillEvidence,
  SkillTrigger,
  SkillRecord,
  SkillStats,
  SkillRef,
  SkillChange,
  SkillStatus,
  SkillQuery,
  SkillMatch,
} from "./types.ts";
export type { SkillStore } from "./skill-store.ts";
export { InMemorySkillStore } from "./in-memory-skill-store.ts";
export { JsonFileSkillStore, SKILL_FILE_FORMAT, type JsonFileSkillStoreOptions } from "./json-file-skill-store.ts";
export type { SkillOptions } from "./record-version.ts";
export { distillSkills, DEFAULT_MIN_OCCURRENCES, type DistillOptions } from "./distill.ts";
export { ingestDistilledSkills } from "./ingest.ts";
export {
  reportOutcome,
  domainsNeedingEvolution,
  shouldDegrade,
  successRate,
  DEFAULT_EVOLUTION_THRESHOLD,
  type SkillOutcome,
  type OutcomeReport,
} from "./outcomes.ts";
export {
  evolveSkills,
  repairSkill,
  distillingEvolver,
  distillingRepairer,
  type ImproveOptions,
  type EvolveRequest,
  type SkillEvolver,
  type RepairRequest,
  type SkillRepair,
  type SkillRepairer,
} from "./improve.ts";
export { findSkill } from "./find.ts";
export { traceEventsFrom } from "./runtime-trace.ts";
export {
  ingestProvisionalSkills,
  runPromotionGate,
  skillMeta,
  wilsonLowerBound,
  statusOf,
  CANDIDATE_SUFFIX,
  DEFAULT_MIN_TRIAL_SAMPLES,
  type GateOptions,
  type GateResult,
  type SkillMeta,
} from "./lifecycle.ts";
export { exportSkill, importSkill, SKILL_DOCUMENT_FORMAT } from "./portable.ts";
