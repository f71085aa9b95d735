/**
 * `@car/server/run-report`: a run drawn for a person from its audit events —
 * what `car run --report`, `car audit report` and the operator console
 * (`car serve --console`) all show — and the HTML escaping it relies on.
 */
export { escapeHtml } from "./escape-html.ts";
export {
  RUN_REPORT_CSS,
  type ReportEvent,
  type RowStatus,
  runReportHtml,
  type RunTimeline,
  runTimeline,
  type TimelineRow,
  type Wait,
} from "./run-report-html.ts";
