/**
 * The operator console: one WebSocket to `car serve`, authenticated with
 * `session.auth` like any operator client, so the page can do exactly what
 * an operator connection can and nothing more. It lists what waits
 * (`supervision.pending`, `permission.pending`), answers it
 * (`supervision.decide`, `permission.approve` / `reject`), follows the server
 * (`host.subscribe`) and frames a proposal's run report.
 *
 * Everything shown comes from agents and is hostile (tool names, ids,
 * reasons): it is only ever put in the page as text (`textContent`, text
 * nodes, `setAttribute` on data attributes), never parsed as HTML. The run
 * report is HTML the server drew and escaped; it goes in a sandboxed frame
 * that runs no script.
 */

const PROTOCOL_VERSION = 3;
const REFRESH_MS = 2000;
const FEED_MAX = 200;

const $ = (id) => document.getElementById(id);

/** An element with text content and attributes; children are elements or strings (strings become text nodes). */
function el(tag, { className, text, attrs } = {}, ...children) {
  const e = document.createElement(tag);
  if (className !== undefined) e.className = className;
  if (text !== undefined) e.textContent = String(text);
  for (const [k, v] of Object.entries(attrs ?? {})) e.setAttribute(k, String(v));
  for (const c of children) if (c !== undefined && c !== null) e.append(c);
  return e;
}

const str = (v) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));
const when = (v) => {
  const d = new Date(typeof v === "number" ? v : String(v));
  return Number.isNaN(d.getTime()) ? str(v) : d.toLocaleTimeString();
};

function setStatus(text, tone = "off") {
  const s = $("status");
  s.textContent = text;
  s.className = `status ${tone}`;
}

// ---- JSON-RPC over the WebSocket -------------------------------------------------------------

/** Opens the socket; resolves with `{ call, on, close }` once it is open. */
function connect(url, onClosed) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const waiting = new Map();
    const listeners = new Map();
    let next = 1;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      resolve({
        call(method, params = {}) {
          const id = next++;
          return new Promise((ok, fail) => {
            waiting.set(id, { ok, fail });
            ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
          });
        },
        on(method, handler) {
          listeners.set(method, handler);
        },
        close: () => ws.close(1000, "console closed"),
      });
    };
    ws.onerror = () => {
      if (!opened) reject(new Error("cannot open the WebSocket"));
    };
    ws.onmessage = (event) => {
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      if (msg === null || typeof msg !== "object" || Array.isArray(msg)) return;
      if (typeof msg.method === "string") {
        // The console registers no tools and runs no agents: any request from the server is answered "no such method".
        if (msg.id !== undefined && msg.id !== null) {
          ws.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "the operator console answers no requests" } }));
        } else listeners.get(msg.method)?.(msg.params ?? {});
        return;
      }
      const w = waiting.get(msg.id);
      if (w === undefined) return;
      waiting.delete(msg.id);
      if (msg.error !== undefined) w.fail(new Error(str(msg.error?.message) || "error"));
      else w.ok(msg.result);
    };
    ws.onclose = (event) => {
      const why = new Error(`connection closed (${event.code}${event.reason ? `: ${event.reason}` : ""})`);
      for (const w of waiting.values()) w.fail(why);
      waiting.clear();
      if (!opened) reject(why);
      else onClosed(why);
    };
  });
}

// ---- state -----------------------------------------------------------------------------------

let token = "";
let rpc;
let refresher;
let openReportId;
let reportTimer;
/** Cards on screen by id, so a refresh keeps a reason being typed. */
const intentCards = new Map();
const approvalCards = new Map();
/** Live runs by proposal id: `{ row, cells, status, changes }`. */
const runs = new Map();

async function start(value) {
  token = value;
  setStatus("connecting…");
  const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/`;
  let client;
  try {
    client = await connect(url, (why) => {
      // A socket closed before it was ever ours (a refused login) has already said why.
      if (rpc !== client) return;
      rpc = undefined;
      clearInterval(refresher);
      setStatus(why.message, "error");
    });
    await client.call("session.auth", { token });
    await client.call("server.handshake", { protocol_version: PROTOCOL_VERSION, client_version: "car-console" });
    client.on("supervision.intent", () => void refreshIntents());
    client.on("host.event", onHostEvent);
    await client.call("host.subscribe", {});
  } catch (err) {
    client?.close();
    setStatus(`refused: ${err.message}`, "error");
    return;
  }
  rpc = client;
  setStatus("connected", "on");
  $("login").hidden = true;
  $("desk").hidden = false;
  await refreshAll();
  refresher = setInterval(() => void refreshAll(), REFRESH_MS);
}

async function refreshAll() {
  // An open timeline of a run still going is redrawn too: its actions' events arrive between host events.
  const open = openReportId === undefined ? undefined : runs.get(openReportId);
  const live = open !== undefined && open.status !== "finished";
  await Promise.all([refreshIntents(), refreshApprovals(), live ? openReport(openReportId) : undefined]);
}

/** Adds the cards of `items` not yet shown and drops those no longer listed. */
function sync(list, cards, items, idOf, build, emptyNote) {
  const seen = new Set();
  for (const item of items) {
    const id = idOf(item);
    seen.add(id);
    if (cards.has(id)) continue;
    // Lists come oldest first, so a new card goes last; a card already shown is not moved (moving it would drop a reason being typed).
    cards.set(id, build(item));
    list.append(cards.get(id));
  }
  for (const [id, card] of cards) {
    if (seen.has(id)) continue;
    card.remove();
    cards.delete(id);
  }
  emptyNote.hidden = items.length > 0;
}

// ---- supervision -----------------------------------------------------------------------------

async function refreshIntents() {
  if (rpc === undefined) return;
  try {
    const { intents } = await rpc.call("supervision.pending", {});
    sync($("intents"), intentCards, intents, (i) => str(i.id), intentCard, $("intents-empty"));
  } catch (err) {
    setStatus(`supervision.pending: ${err.message}`, "error");
  }
}

function actionList(actions) {
  return el(
    "ul",
    { className: "actions" },
    ...actions.map((a) =>
      el(
        "li",
        {},
        el("code", { className: "action-id", text: a.id }),
        " ",
        el("span", { className: "type", text: a.action_type ?? a.type ?? "" }),
        a.tool !== undefined ? " " : "",
        a.tool !== undefined ? el("strong", { className: "tool", text: a.tool }) : "",
        a.reversibility !== undefined ? el("span", { className: `rev ${str(a.reversibility)}`, text: ` · ${str(a.reversibility)}` }) : "",
        el("span", { className: "keys", text: ` · keys: ${(a.parameter_keys ?? []).map(str).join(", ") || "none"}` }),
      ),
    ),
  );
}

/** The answer row of a card: a reason, the buttons, and where an error is said. */
function answerRow(buttons, proposalId) {
  const reason = el("input", { className: "reason", attrs: { placeholder: "reason", spellcheck: "false" } });
  const error = el("p", { className: "error" });
  const row = el("div", { className: "answer" }, reason);
  for (const [kind, label, act] of buttons) {
    const b = el("button", { className: kind, text: label, attrs: { type: "button" } });
    b.addEventListener("click", async () => {
      error.textContent = "";
      try {
        await act(reason.value.trim());
        await refreshAll();
      } catch (err) {
        error.textContent = err.message;
      }
    });
    row.append(b);
  }
  const timeline = el("button", { className: "timeline", text: "timeline", attrs: { type: "button" } });
  timeline.addEventListener("click", () => void openReport(proposalId));
  row.append(timeline);
  return { row, error };
}

function intentCard(intent) {
  const decide = (kind) => async (reason) => {
    if (kind !== "allow" && reason === "") throw new Error(`a reason is required to ${kind}`);
    await rpc.call("supervision.decide", { intent_id: intent.id, decision: { kind, ...(reason !== "" ? { reason } : {}) } });
  };
  const { row, error } = answerRow(
    [
      ["allow", "Allow", decide("allow")],
      ["deny", "Deny", decide("deny")],
      ["escalate", "Escalate", decide("escalate")],
    ],
    str(intent.proposal_id),
  );
  return el(
    "li",
    { className: "card intent", attrs: { "data-intent-id": str(intent.id), "data-proposal-id": str(intent.proposal_id) } },
    el("div", { className: "head", text: `proposal ${str(intent.proposal_id)}` }),
    el("div", { className: "meta", text: `from ${str(intent.source)} · ${str(intent.reversibility)} · parked ${when(intent.created_at)}` }),
    actionList(Array.isArray(intent.actions) ? intent.actions : []),
    row,
    error,
  );
}

async function applySupervision() {
  if (rpc === undefined) return;
  try {
    if (!$("supervising").checked) {
      await rpc.call("supervision.unsubscribe", {});
      setStatus("connected", "on");
      return;
    }
    const filter = {};
    const tools = $("filter-tools")
      .value.split(",")
      .map((t) => t.trim())
      .filter((t) => t !== "");
    if (tools.length > 0) filter.tools = tools;
    const rev = $("filter-reversibility").value;
    if (rev !== "") filter.min_reversibility = rev;
    await rpc.call("supervision.subscribe", { filter });
    setStatus("connected · supervising", "on");
  } catch (err) {
    $("supervising").checked = false;
    setStatus(`supervision.subscribe: ${err.message}`, "error");
  }
}

// ---- approvals -------------------------------------------------------------------------------

async function refreshApprovals() {
  if (rpc === undefined) return;
  try {
    const { pending } = await rpc.call("permission.pending", {});
    sync($("approvals"), approvalCards, pending, (w) => str(w.id), approvalCard, $("approvals-empty"));
  } catch (err) {
    setStatus(`permission.pending: ${err.message}`, "error");
  }
}

function approvalCard(wait) {
  // The decision covers this run only: the operator answers what they were shown, not every later run of the same call.
  const decide = (method) => async (reason) => {
    await rpc.call(method, {
      fingerprint: wait.fingerprint,
      required_tier: wait.required,
      ...(typeof wait.run_id === "string" && wait.run_id !== "" ? { run_id: wait.run_id } : {}),
      ...(reason !== "" ? { reason } : {}),
    });
  };
  const { row, error } = answerRow(
    [
      ["approve", "Approve", decide("permission.approve")],
      ["reject", "Reject", decide("permission.reject")],
    ],
    str(wait.proposal_id),
  );
  return el(
    "li",
    { className: "card approval", attrs: { "data-wait-id": str(wait.id), "data-proposal-id": str(wait.proposal_id) } },
    el("div", { className: "head", text: `proposal ${str(wait.proposal_id)} · action ${str(wait.action_id)}` }),
    el("div", {
      className: "meta",
      text: `asked by ${str(wait.asked_by)} · needs ${str(wait.required)}, has ${str(wait.granted)} · rejected at ${when(wait.deadline)} unless answered`,
    }),
    actionList([{ id: wait.action_id, action_type: "tool_call", tool: wait.tool, parameter_keys: wait.parameter_keys }]),
    el("div", { className: "meta", text: `fingerprint ${str(wait.fingerprint).slice(0, 16)}…` }),
    row,
    error,
  );
}

// ---- live runs and host events ----------------------------------------------------------------

const RUN_STATUS = {
  supervision_parked: "parked for supervision",
  supervision_decided: "decided",
  approval_requested: "waiting for approval",
  approval_resolved: "approval answered",
};

function onHostEvent(event) {
  const rest = Object.entries(event)
    .filter(([k]) => k !== "kind" && k !== "at")
    .map(([k, v]) => `${k}=${str(v)}`)
    .join(" ");
  const feed = $("feed");
  feed.prepend(el("li", { text: `${when(event.at)} ${str(event.kind)} ${rest}` }));
  while (feed.childElementCount > FEED_MAX) feed.lastElementChild.remove();

  const id = typeof event.proposal_id === "string" ? event.proposal_id : undefined;
  if (id !== undefined) {
    const run = runs.get(id) ?? newRun(id, event);
    if (typeof event.agent_id === "string") run.cells.who.textContent = `agent:${event.agent_id}`;
    else if (run.cells.who.textContent === "" && typeof event.session_id === "string") run.cells.who.textContent = event.session_id;
    if (event.kind === "status_changed") {
      // The first change is the run starting; the next one for the same proposal is its session releasing it.
      run.changes += 1;
      run.status = run.changes === 1 ? "running" : "finished";
    } else if (RUN_STATUS[event.kind] !== undefined) {
      run.status = `${RUN_STATUS[event.kind]}${event.decision !== undefined ? `: ${str(event.decision)}` : ""}`;
    }
    drawRun(run);
    if (id === openReportId) scheduleReport();
  }
  if (str(event.kind).startsWith("supervision_")) void refreshIntents();
  if (str(event.kind).startsWith("approval_")) void refreshApprovals();
}

function newRun(id, event) {
  const open = el("button", { className: "timeline", text: "timeline", attrs: { type: "button" } });
  open.addEventListener("click", () => void openReport(id));
  const cells = { who: el("td"), state: el("td", { className: "state" }), since: el("td", { text: when(event.at) }) };
  const row = el("tr", { attrs: { "data-proposal-id": id } }, el("td", {}, el("code", { text: id })), cells.who, cells.state, cells.since, el("td", {}, open));
  const run = { row, cells, status: "", changes: 0 };
  runs.set(id, run);
  $("runs").tBodies[0].prepend(row);
  return run;
}

function drawRun(run) {
  run.cells.state.textContent = run.status;
  run.row.className = run.status === "running" ? "running" : run.status === "finished" ? "finished" : "";
}

// ---- the audit timeline ----------------------------------------------------------------------

function scheduleReport() {
  clearTimeout(reportTimer);
  reportTimer = setTimeout(() => void openReport(openReportId), 300);
}

/** Fetches the server-drawn run report with the token as a bearer credential and frames it (sandboxed: no script runs). */
async function openReport(id) {
  if (id === undefined || id === "") return;
  openReportId = id;
  $("report-id").value = id;
  const note = $("report-note");
  try {
    const res = await fetch(`report/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${token}` },
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer",
    });
    const text = await res.text();
    if (!res.ok) {
      note.textContent = `${res.status}: ${text.trim()}`;
      $("report").srcdoc = "";
      return;
    }
    note.textContent = `proposal ${id}, drawn ${new Date().toLocaleTimeString()}`;
    $("report").srcdoc = text;
  } catch (err) {
    note.textContent = err.message;
  }
}

// ---- wiring ----------------------------------------------------------------------------------

function init() {
  $("login").addEventListener("submit", (e) => {
    e.preventDefault();
    void start($("token").value.trim());
  });
  $("supervise").addEventListener("submit", (e) => e.preventDefault());
  $("supervising").addEventListener("change", () => void applySupervision());
  $("filter-tools").addEventListener("change", () => void applySupervision());
  $("filter-reversibility").addEventListener("change", () => void applySupervision());
  $("open-report").addEventListener("submit", (e) => {
    e.preventDefault();
    void openReport($("report-id").value.trim());
  });
  // A token handed over in the fragment (`car serve --console` prints such a link) is taken once and wiped from the address bar.
  const fromFragment = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromFragment !== null) {
    history.replaceState(null, "", location.pathname + location.search);
    void start(fromFragment);
  }
}

init();
