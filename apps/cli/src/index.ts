/**
 * The `car` command's reusable parts, for programs that want the same plan
 * drawings and tool loading without spawning the CLI.
 */
export { planModel, type PlanModel, type PlanNode } from "./render/plan-model.ts";
export { planDot } from "./render/plan-dot.ts";
export { planHtml, type PlanHtmlExtras } from "./render/plan-html.ts";
export { verifyReport } from "./render/verify-report.ts";
export { colors, colorEnabled, type Colors } from "./render/color.ts";
export { loadToolModule } from "./tools/module-tools.ts";
export { parseProgramTools, type ProgramTool } from "./tools/program-tools.ts";
export { programTool } from "./tools/program-runner.ts";
export type { LoadedTool, ToolContext } from "./tools/loaded-tool.ts";
export { resolveCarHome } from "@car/server/home";
