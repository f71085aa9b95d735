/**
 * The operator console (`car serve --console`) in a real headless Chromium,
 * against a real `car serve` on a real SQLite file, with real `@car/client`
 * agents: the page lists what waits and its clicks decide it; without the
 * token it can do nothing; agent-controlled strings render as text.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "node:http";
import { CarClient } from "@car/client";
import fc from "fast-check";
import { haveChromium, launchChromium } from "@car/test-kit/chromium";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingServeIo } from "../test/test-client.ts";
import { CONSOLE_CSP } from "./console-http.ts";
import { runServe } from "./serve-command.ts";
import { startServer } from "./server.ts";

let carHome: string;
let stop: () => Promise<number>;
let url: string;
let token: string;
/** The link `car serve --console` prints: the page's address with the token in the fragment. */
let link: string;
let consoleUrl: string;
let browser: Browser;
const clients: CarClient[] = [];
const pages: Page[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-console-"));
  const io = recordingServeIo(carHome);
  const done = runServe(["--port", "0", "--db", join(carHome, "car.db"), "--console"], io);
  stop = () => {
    io.signal("SIGTERM");
    return done;
  };
  for (let i = 0; i < 400 && io.out.length < 4; i++) await new Promise((r) => setTimeout(r, 50));
  url = io.out[0]!.replace("car serve listening on ", "");
  token = io.out[1]!.replace("auth token: ", "");
  link = io.out.find((l) => l.startsWith("console: "))!.replace("console: ", "");
  consoleUrl = link.slice(0, link.indexOf("#"));
  if (haveChromium) browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  for (const p of pages) await p.close();
  await browser?.close();
  for (const c of clients) await c.close();
  await stop();
  await rm(carHome, { recursive: true, force: true });
});

/** `text` as path bytes: printable ASCII kept as it is (a stray `%` too, so malformed escapes are sent), every other byte as `%XX`. */
function rawPathOf(text: string): string {
  return [...Buffer.from(text, "utf8")]
    .map((b) => (b > 0x20 && b < 0x7f && b !== 0x23 && b !== 0x3f ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`))
    .join("");
}

/** A GET of exactly `path` (no client-side normalisation); resolves with the status. */
function rawGet(path: string, headers: Record<string, string>): Promise<number> {
  const { hostname, port } = new URL(consoleUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, headers, method: "GET" }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

/** An agent connection whose tool callback records every call. */
async function agent(agentId: string): Promise<{ car: CarClient; called: string[] }> {
  const car = await CarClient.connect(url, { token, agentId });
  clients.push(car);
  const called: string[] = [];
  car.onRequest("tools.execute", ({ tool }) => {
    called.push(tool);
    return "sent";
  });
  return { car, called };
}

async function openPage(address: string): Promise<Page> {
  const page = await browser.newPage();
  pages.push(page);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && !/401|Unauthorized/.test(m.text())) errors.push(m.text());
  });
  (page as Page & { errors: string[] }).errors = errors;
  await page.goto(address);
  return page;
}

/** The page's globals a test reads (this package type-checks without the DOM library). */
interface PageGlobals {
  getComputedStyle(element: unknown): { backgroundColor: string };
}

/** How long a page may take to show what the server did (generous: CI machines are loaded). */
const POLL = { timeout: 15_000 };

const email = (to: string) => ({ id: "s", type: "tool_call", tool: "send_email", parameters: { to, body: "quarterly numbers" } });

describe("the console's HTTP side", () => {
  it("serves the page with a strict CSP; a report needs the token as a bearer credential", async () => {
    const page = await fetch(consoleUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain("unsafe-inline");
    expect(CONSOLE_CSP).not.toContain("unsafe-eval");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    // The page is a shell: it holds no token and no data.
    expect(await page.text()).not.toContain(token);
    expect((await fetch(`${consoleUrl}report/anything`)).status).toBe(401);
    expect((await fetch(`${consoleUrl}report/anything`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
    expect((await fetch(`${consoleUrl}report/anything?token=${token}`)).status).toBe(401);
    expect((await fetch(`${consoleUrl}report/never-submitted`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
    const bearer = { headers: { authorization: `Bearer ${token}` } };
    expect((await fetch(`${consoleUrl}report/%E0%A4%A`, bearer)).status).toBe(400);
    expect((await fetch(`${consoleUrl}report/${"p".repeat(257)}`, bearer)).status).toBe(400);
    expect((await fetch(`${consoleUrl}nothing-here`)).status).toBe(404);
    expect((await fetch(consoleUrl, { method: "POST" })).status).toBe(405);
  });

  it("ships a script that never parses a string as HTML or code", async () => {
    const script = await (await fetch(`${consoleUrl}console.js`)).text();
    expect(script).toContain("textContent");
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(["'`]/);
  });

  it("answers any path under /console with a definite status, never a server error (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme", maxLength: 300 }), fc.boolean(), async (text, withToken) => {
        const headers: Record<string, string> = withToken ? { authorization: `Bearer ${token}` } : {};
        // A raw path (not percent-encoded by a URL parser first), as a hostile client could send it.
        const path = `/console/report/${rawPathOf(text)}`;
        const status = await rawGet(path, headers);
        expect(withToken ? [200, 400, 404] : [401]).toContain(status);
      }),
      { numRuns: 100 },
    );
  });

  it("answers 404 under /console without --console, and the WebSocket path keeps its 426", async () => {
    const plain = await startServer({ port: 0, carHome, writeTokenFile: false });
    try {
      const base = plain.url.replace("ws://", "http://");
      expect(plain.consoleUrl).toBeUndefined();
      expect((await fetch(`${base}console/`)).status).toBe(404);
      expect((await fetch(`${base}console/console.js`)).status).toBe(404);
      expect((await fetch(`${base}console/report/x`, { headers: { authorization: `Bearer ${plain.token}` } })).status).toBe(404);
      expect((await fetch(base)).status).toBe(426);
    } finally {
      await plain.close({ graceMs: 0 });
    }
  });

  it("is refused without a token: --console with --no-auth exits 2, startServer throws", async () => {
    const io = recordingServeIo(carHome);
    expect(await runServe(["--port", "0", "--no-auth", "--console"], io)).toBe(2);
    expect(io.err[0]).toBe("car serve: --console needs the token: it cannot be combined with --no-auth (or CAR_NO_AUTH=1)");
    expect(io.out).toEqual([]);
    await expect(startServer({ port: 0, carHome, auth: false, console: true, writeTokenFile: false })).rejects.toMatchObject({
      code: "invalid_params",
      message: expect.stringContaining("--console cannot be combined with --no-auth"),
    });
  });
});

describe.skipIf(!haveChromium)("the operator console in Chromium", () => {
  it("shows a proposal waiting for approval; a click approves it, it runs, and the timeline shows the wait and who approved", async () => {
    const { car, called } = await agent("mailer");
    await car.call("session.init", { client_id: "mailer", tools: [{ name: "send_email" }] });
    const page = await openPage(link);
    await expect.poll(() => page.locator("#status").textContent(), POLL).toBe("connected");
    // The token is taken from the fragment once and wiped from the address bar.
    expect(page.url()).not.toContain(token);

    const submitted = car.call("proposal.submit", {
      proposal: { id: "console-approve", actions: [email("a@example.com")] },
      wait_for_approval_ms: 20_000,
    } as never);
    const card = page.locator('#approvals li.card[data-proposal-id="console-approve"]');
    await card.waitFor(POLL);
    const text = await card.textContent();
    expect(text).toContain("send_email");
    expect(text).toContain("keys: body, to");
    expect(text).toContain("asked by agent:mailer");
    expect(text).not.toContain("a@example.com");
    expect(text).not.toContain("quarterly");
    expect(called).toEqual([]);

    await card.locator("button.approve").click();
    const result = (await submitted) as { results: { status: string }[] };
    expect(result.results.map((r) => r.status)).toEqual(["succeeded"]);
    expect(called).toEqual(["send_email"]);
    await card.waitFor({ state: "detached" });
    // The click approved that run only: the same call in another proposal needs its own approval.
    const again = (await car.call("proposal.submit", { proposal: { id: "console-approve-again", actions: [email("a@example.com")] } } as never)) as {
      results: { status: string }[];
    };
    expect(again.results.map((r) => r.status)).toEqual(["rejected"]);
    expect(called).toEqual(["send_email"]);

    // The run was followed live (host events), and its timeline opens from its row.
    const row = page.locator('#runs tr[data-proposal-id="console-approve"]');
    await expect.poll(() => row.locator("td.state").textContent(), POLL).toBe("finished");
    expect(await row.locator("td").nth(1).textContent()).toBe("agent:mailer");
    expect(await page.locator("#feed").textContent()).toContain("approval_resolved");
    await row.locator("button.timeline").click();
    // The report is framed with every sandbox restriction: it runs no script.
    expect(await page.locator("#report").getAttribute("sandbox")).toBe("");
    const report = page.frameLocator("#report");
    const wait = report.locator("rect.wait.approval");
    await wait.waitFor(POLL);
    expect(await wait.getAttribute("data-decision")).toBe("allow");
    const reviewer = await wait.getAttribute("data-reviewer");
    expect(reviewer).toMatch(/^conn:/);
    expect(Number(await wait.getAttribute("data-wait-ms"))).toBeGreaterThan(0);
    expect(await report.locator("tr[data-action-id='s'] td.approval").textContent()).toContain(`decided by ${reviewer}`);
    expect(await report.locator("tr[data-action-id='s'] td.status").textContent()).toBe("succeeded");
    // The framed report drew with its own stylesheet (allowed by hash): its swatches have their colours.
    const swatch = await report.locator("i.swatch.approval").evaluate((e) => (globalThis as unknown as PageGlobals).getComputedStyle(e).backgroundColor);
    expect(swatch).toBe("rgb(196, 181, 253)");
    expect((page as Page & { errors: string[] }).errors).toEqual([]);
  }, 60_000);

  it("without the token the page cannot act: no desk, the WebSocket refuses, a report is refused", async () => {
    const page = await openPage(consoleUrl);
    expect(await page.locator("#status").textContent()).toBe("not connected");
    expect(await page.locator("#desk").isHidden()).toBe(true);
    await page.fill("#token", "not-the-token");
    await page.click("#login button[type=submit]");
    await expect.poll(() => page.locator("#status").textContent(), POLL).toMatch(/^refused: auth failed/);
    expect(await page.locator("#desk").isHidden()).toBe(true);
    expect(await page.locator("#approvals li").count()).toBe(0);

    // The page's own origin cannot skip the login: an unauthenticated socket is answered -32001 and closed; a report is 401.
    const unauthenticated = await page.evaluate(
      (wsUrl) =>
        new Promise<{ code: number | undefined; closed: number }>((resolve) => {
          const ws = new WebSocket(wsUrl);
          let code: number | undefined;
          ws.onopen = () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "permission.pending", params: {} }));
          ws.onmessage = (e) => (code = JSON.parse(e.data).error?.code);
          ws.onclose = (e) => resolve({ code, closed: e.code });
        }),
      url,
    );
    expect(unauthenticated).toEqual({ code: -32001, closed: 1008 });
    expect(await page.evaluate(() => fetch("report/console-approve").then((r) => r.status))).toBe(401);
  }, 30_000);

  it("shows a supervision intent with a hostile tool name as text, and a deny from the page rejects the proposal", async () => {
    const page = await openPage(link);
    await expect.poll(() => page.locator("#status").textContent(), POLL).toBe("connected");
    await page.check("#supervising");
    await expect.poll(() => page.locator("#status").textContent(), POLL).toBe("connected · supervising");

    const hostile = `<img src=x onerror="window.__pwned=1">`;
    const { car, called } = await agent("sneaky");
    await car.call("session.init", { client_id: "sneaky", tools: [{ name: hostile }] });
    const submitted = car.call("proposal.submit", {
      proposal: { id: "console-deny", actions: [{ id: "x", type: "tool_call", tool: hostile, parameters: { [`<b>k</b>`]: "secret-value" } }] },
    } as never);
    const card = page.locator('#intents li.card[data-proposal-id="console-deny"]');
    await card.waitFor(POLL);
    expect(await card.locator(".tool").textContent()).toBe(hostile);
    expect(await card.locator(".keys").textContent()).toBe(" · keys: <b>k</b>");
    expect(await card.textContent()).not.toContain("secret-value");
    expect(await page.locator("img, b").count()).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();

    // A deny needs a reason: the page says so and asks the server nothing.
    await card.locator("button.deny").click();
    expect(await card.locator(".error").textContent()).toBe("a reason is required to deny");
    await card.locator("input.reason").fill("not on my watch");
    await card.locator("button.deny").click();
    const result = (await submitted) as { results: { status: string; error?: string }[] };
    expect(result.results.map((r) => r.status)).toEqual(["rejected"]);
    expect(JSON.stringify(result)).toContain("not on my watch");
    expect(called).toEqual([]);
    await card.waitFor({ state: "detached" });

    await page.uncheck("#supervising");
    await expect.poll(() => page.locator("#status").textContent(), POLL).toBe("connected");
    expect((page as Page & { errors: string[] }).errors).toEqual([]);
  }, 60_000);

  it("escalates an intent from the page into an approval wait, which the page then approves", async () => {
    const page = await openPage(link);
    await expect.poll(() => page.locator("#status").textContent(), POLL).toBe("connected");
    await page.fill("#filter-tools", "archive");
    await page.check("#supervising");
    await expect.poll(() => page.locator("#status").textContent(), POLL).toBe("connected · supervising");

    const { car, called } = await agent("archiver");
    await car.call("session.init", { client_id: "archiver", tools: [{ name: "archive" }] });
    const submitted = car.call("proposal.submit", {
      proposal: { id: "console-escalate", actions: [{ id: "a", type: "tool_call", tool: "archive", parameters: { path: "/srv/x" } }] },
      wait_for_approval_ms: 20_000,
    } as never);
    const intent = page.locator('#intents li.card[data-proposal-id="console-escalate"]');
    await intent.waitFor(POLL);
    await intent.locator("input.reason").fill("a human should look at this");
    await intent.locator("button.escalate").click();
    await intent.waitFor({ state: "detached" });
    // Escalated, it needs a recorded approval whatever its tier: it waits, listed with the approvals.
    const wait = page.locator('#approvals li.card[data-proposal-id="console-escalate"]');
    await wait.waitFor(POLL);
    expect(called).toEqual([]);
    await wait.locator("button.approve").click();
    const result = (await submitted) as { results: { status: string }[] };
    expect(result.results.map((r) => r.status)).toEqual(["succeeded"]);
    expect(called).toEqual(["archive"]);
    await page.uncheck("#supervising");
  }, 60_000);
});
