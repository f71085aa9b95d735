/**
 * The operator console's HTTP side (`car serve --console`): the page's static
 * files, shipped in the package's `console/` directory, and one run
 * report per proposal drawn from the audit log. Everything the page does
 * besides reading a report goes over the WebSocket, authenticated by
 * `session.auth` like any client's, so the console gets no power an
 * operator connection lacks. The static files hold no data; a report is
 * answered only to a request that carries the token in an `Authorization:
 * Bearer` header (never in a URL, which would land in logs and history).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { tokensMatch } from "./auth.ts";
import { type StoredEventLog, storedEvents } from "./car-database.ts";
import { RUN_REPORT_CSS, runReportHtml, runTimeline } from "./report/index.ts";
import { UNSCOPED } from "./tenancy.ts";

/** Where the console lives on the server; any other path keeps the WebSocket's 426 answer. */
export const CONSOLE_PATH = "/console";

/** The longest proposal id a report request may name (ids are short; this bounds the log query). */
const MAX_PROPOSAL_ID = 256;

const ASSETS = {
  "/console/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/console/console.js": { file: "console.js", type: "text/javascript; charset=utf-8" },
  "/console/console.css": { file: "console.css", type: "text/css; charset=utf-8" },
  "/console/favicon.svg": { file: "favicon.svg", type: "image/svg+xml" },
} as const;

/** The CSP hash source of the run report's one stylesheet, so a framed report may use it and nothing else inline. */
const REPORT_STYLE_HASH = `'sha256-${createHash("sha256").update(RUN_REPORT_CSS, "utf8").digest("base64")}'`;

/**
 * The page's policy: scripts and styles from this server only (no inline
 * script, no eval), the socket and the report fetch to this server only,
 * nothing framed from elsewhere (the report is an `srcdoc` frame, which
 * inherits this policy — hence the report stylesheet's hash), and the page
 * itself framed by nobody.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' ${REPORT_STYLE_HASH}`,
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** A report runs no script and loads nothing: its own stylesheet only, sandboxed even when opened directly. */
const REPORT_CSP = `default-src 'none'; style-src ${REPORT_STYLE_HASH}; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox`;

const COMMON_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

export interface ConsoleOptions {
  /** The server's token (the server refuses the console with auth off, so there always is one). */
  token: string;
  /** The shared audit log reports are drawn from; undefined on a server without a database (`--db :memory:`). */
  events: StoredEventLog | undefined;
}

/** Answers one HTTP request under `/console`; the caller routes only such requests here. */
export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** The console's files, read once at start from the package's `console/` directory (beside `src/` and `dist/`). */
export async function consoleHandler(options: ConsoleOptions): Promise<ConsoleHandler> {
  const dir = new URL("../console/", import.meta.url);
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [path, asset] of Object.entries(ASSETS)) {
    files.set(path, { body: await readFile(fileURLToPath(new URL(asset.file, dir))), type: asset.type });
  }
  return async (req, res) => {
    const path = new URL(req.url ?? "/", "http://console.invalid").pathname;
    if (req.method !== "GET" && req.method !== "HEAD") return plain(res, 405, "method not allowed\n", { allow: "GET, HEAD" });
    if (path === CONSOLE_PATH) return redirect(res, `${CONSOLE_PATH}/`);
    const file = files.get(path);
    if (file !== undefined) {
      res.writeHead(200, { ...COMMON_HEADERS, "content-type": file.type, "content-security-policy": CONSOLE_CSP, "x-frame-options": "DENY" });
      res.end(req.method === "HEAD" ? undefined : file.body);
      return;
    }
    if (path.startsWith(`${CONSOLE_PATH}/report/`)) return report(req, res, path.slice(`${CONSOLE_PATH}/report/`.length), options);
    return plain(res, 404, "not found\n");
  };
}

/** A proposal's run report, for a request bearing the token. */
async function report(req: IncomingMessage, res: ServerResponse, encodedId: string, options: ConsoleOptions): Promise<void> {
  if (!authorized(req, options.token)) return plain(res, 401, "a report needs the token: Authorization: Bearer <token>\n", { "www-authenticate": "Bearer" });
  let proposalId: string;
  try {
    proposalId = decodeURIComponent(encodedId);
  } catch {
    return plain(res, 400, "the proposal id is not valid percent-encoding\n");
  }
  if (proposalId === "" || proposalId.length > MAX_PROPOSAL_ID) return plain(res, 400, `a proposal id is 1 to ${MAX_PROPOSAL_ID} characters\n`);
  if (options.events === undefined) return plain(res, 404, "this server keeps no shared audit log (--db :memory:): no report to draw\n");
  // Ascending, as the report reads a run from its first event; an event naming a tenant's key stays out, as events.query keeps it out.
  const events = (await storedEvents(options.events, { proposal_id: proposalId, order: "asc" })).filter((e) => {
    const key = e.data["key"];
    return typeof key !== "string" || UNSCOPED.visible(key) !== undefined;
  });
  if (events.length === 0) return plain(res, 404, "no events for this proposal\n");
  res.writeHead(200, { ...COMMON_HEADERS, "content-type": "text/html; charset=utf-8", "content-security-policy": REPORT_CSP });
  res.end(req.method === "HEAD" ? undefined : runReportHtml(runTimeline(proposalId, events)));
}

/** The exact token as a bearer credential. */
function authorized(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  const m = header === undefined ? null : /^Bearer ([^\s]+)$/.exec(header);
  return m !== null && tokensMatch(token, m[1]!);
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...COMMON_HEADERS, ...headers, "content-type": "text/plain; charset=utf-8" });
  res.end(text);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(308, { ...COMMON_HEADERS, location });
  res.end();
}
