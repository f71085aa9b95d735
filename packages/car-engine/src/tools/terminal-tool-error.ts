/**
 * The fail-stop signal a tool raises when retrying cannot help (the seeds'
 * `ToolFailureClassification::Terminal`). The engine stops retrying, aborts
 * the proposal and rolls its state back, whatever the action's
 * `failure_behavior`; the failed result carries `terminal: true`.
 * Terminality is opt-in: no error message is ever read as terminal.
 */
export class TerminalToolError extends Error {
  override readonly name: string = "TerminalToolError";
}
