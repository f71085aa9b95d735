import { type ActionInput, sequentialIds } from "@car/ir";
import { Runtime, manualTimers } from "../src/index.ts";
import type { ManualTimers, RuntimeOptions } from "../src/index.ts";

/** A runtime on fake time: clock and timers move only through `timers`. */
export function fakeRuntime(options: RuntimeOptions = {}): { rt: Runtime; timers: ManualTimers } {
  const timers = manualTimers(1_700_000_000_000);
  const rt = new Runtime({ clock: timers, timers, ids: sequentialIds("id"), ...options });
  return { rt, timers };
}

/** A tool_call action as a producer writes it; `extra` adds or overrides fields. */
export const tc = (id: string, tool: string, extra: Partial<ActionInput> = {}): ActionInput => ({
  id,
  type: "tool_call",
  tool,
  parameters: {},
  ...extra,
});
