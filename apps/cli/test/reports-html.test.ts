/**
 * The reviewer's and the operator's HTML views in headless Chromium: the
 * plan's per-action details on selection, blocked actions, a 1,000-action
 * plan, and the run report (`car run --report`, `car audit report`) with
 * its timeline of statuses, retries, waits (rate limit and approval),
 * denials, rollback and cost.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { borrowedStore, Runtime } from "@car/engine";
import { parseAction } from "@car/ir";
import { type ApprovalAnswer, ApprovalGate, operationFingerprint } from "@car/policy";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCarDatabase } from "@car/server/home";
import { COUNT_PIXELS, haveChromium, launchChromium, type PixelCount } from "@car/test-kit/chromium";
import { runCar } from "./run-car.ts";

const tmp = mkdtempSync(join(tmpdir(), "car-views-"));
let browser: Browser;

beforeAll(async () => {
  if (haveChromium) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  rmSync(tmp, { recursive: true, force: true });
});

function file(name: string, value: unknown): string {
  const path = join(tmp, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

async function pixels(page: Page, selector: string): Promise<PixelCount> {
  const shot = await page.locator(selector).screenshot();
  return (await page.evaluate(`(${COUNT_PIXELS})(${JSON.stringify(shot.toString("base64"))})`)) as PixelCount;
}

describe.skipIf(!haveChromium)("the HTML plan: details, blocked actions, scale", () => {
  it("shows an action's parameters, preconditions, effects, failure behaviour, timeout, tier, reversibility and compensation when selected", async () => {
    const proposal = file("review.json", {
      id: "review1",
      actions: [
        { id: "build", type: "tool_call", tool: "build", parameters: { target: "web" }, expected_effects: { built: true } },
        {
          id: "deploy",
          type: "tool_call",
          tool: "deploy",
          parameters: { env: "staging", replicas: 3 },
          dependencies: ["build"],
          preconditions: [{ key: "approved", operator: "eq", value: true }],
          expected_effects: { deployed: true },
          failure_behavior: "retry",
          max_retries: 2,
          timeout_ms: 45000,
          reversibility: "compensable",
          compensation: { type: "tool", tool: "rollback_deploy", parameters: { env: "staging" } },
        },
        { id: "announce", type: "tool_call", tool: "notify", parameters: { channel: "#ops" }, dependencies: ["deploy"] },
      ],
    });
    const out = join(tmp, "review.html");
    const r = await runCar(["verify", proposal, "--state", file("state.json", { approved: false }), "--format", "html", "-o", out]);
    expect([0, 1]).toContain(r.code);
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.goto(pathToFileURL(out).href);
    // Nothing is expanded until an action is selected.
    expect(await page.locator("section.detail:visible").count()).toBe(0);
    await page.locator('svg g.action[data-action-id="deploy"]').click();
    const shown = page.locator("section.detail:visible");
    expect(await shown.count()).toBe(1);
    expect(await shown.getAttribute("data-action-id")).toBe("deploy");
    const text = (await shown.innerText()).replace(/\s+/g, " ");
    for (const expected of [
      '"env": "staging"',
      '"replicas": 3',
      '"key": "approved"',
      '"deployed": true',
      "retry, up to 2 retries",
      "45000 ms",
      "compensable",
      "rollback_deploy",
      "build",
    ])
      expect(text).toContain(expected);
    expect(await shown.locator("dd.tier").innerText()).toMatch(/read_only|sandbox_edit|full_access/);
    // `approved` is false: deploy cannot run, and announce after it.
    const blocked = await page.locator("svg g.action.blocked").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-action-id")));
    expect(blocked).toEqual(["deploy", "announce"]);
    await page.locator('svg g.action[data-action-id="build"]').click();
    expect(await page.locator("section.detail:visible").getAttribute("data-action-id")).toBe("build");
    const px = await pixels(page, "div.plan");
    expect(px.colors).toBeGreaterThan(20);
    expect(px.inked / (px.width * px.height)).toBeGreaterThan(0.02);
    await page.close();
  });

  it("stays usable at 1,000 actions: every box drawn, any one selectable", async () => {
    const actions = Array.from({ length: 1000 }, (_, i) => ({
      id: `a${i}`,
      type: "tool_call",
      tool: `tool${i % 7}`,
      parameters: { n: i },
      ...(i >= 25 ? { dependencies: [`a${i - 25}`] } : {}),
    }));
    const out = join(tmp, "big.html");
    const r = await runCar(["verify", file("big.json", { id: "big", actions }), "--format", "html", "-o", out]);
    expect(r.code).toBe(0);
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.goto(pathToFileURL(out).href);
    expect(await page.locator("svg g.action").count()).toBe(1000);
    const box = page.locator('svg g.action[data-action-id="a737"]');
    await box.scrollIntoViewIfNeeded();
    await box.click();
    const shown = page.locator("section.detail:visible");
    expect(await shown.getAttribute("data-action-id")).toBe("a737");
    expect(await shown.innerText()).toContain('"n": 737');
    // 40 levels of 25: a drawing a person can scroll, not one box per screen.
    const size = await page.locator("div.plan svg").evaluate((svg) => ({ w: Number(svg.getAttribute("width")), h: Number(svg.getAttribute("height")) }));
    expect(size.h).toBeLessThan(3000);
    expect(size.w).toBeLessThan(12000);
    await page.close();
  });
});

const TOOLS = `
let calls = 0;
export const flaky = async () => { calls += 1; if (calls === 1) throw new Error("transient glitch"); return { ok: true }; };
export const limited = { schema: { name: "limited", rate_limit: { max_calls: 1, interval_secs: 1 } }, handler: async () => ({ ok: true }) };
export const shell = async () => ({ ran: true });
`;

describe.skipIf(!haveChromium)("the run report", () => {
  it("draws car run --report and car audit report the same: statuses, durations, retries, waits, denials, rollback, cost", async () => {
    const tools = file("tools.mjs", TOOLS);
    const policies = join(tmp, "policies");
    mkdirSync(policies);
    file("policies/deny.toml", '[[deny_tool_param]]\ntool = "shell"\nparam = "command"\ncontains = "rm -rf"\n');
    const wipe = { id: "wipe", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /" }, dependencies: ["two"] };
    const proposal = file("run.json", {
      id: "runreport01",
      actions: [
        { id: "mark", type: "state_write", parameters: { key: "started", value: true } },
        { id: "fetch", type: "tool_call", tool: "flaky", failure_behavior: "retry", max_retries: 2 },
        { id: "one", type: "tool_call", tool: "limited", dependencies: ["fetch"] },
        { id: "two", type: "tool_call", tool: "limited", dependencies: ["one"] },
        wipe,
      ],
    });
    const db = join(tmp, "car.db");
    // `rm -rf` is full_access (DECISIONS §16): approved, so the policy is what denies it.
    const approve = ["approvals", "approve", operationFingerprint(parseAction(wipe)), "--tier", "full_access", "--db", db];
    expect((await runCar(approve, { env: { CAR_HOME: tmp } })).code).toBe(0);
    const report = join(tmp, "run.html");
    const r = await runCar(["run", proposal, "--tools", tools, "--policies", policies, "--db", db, "--report", report], { env: { CAR_HOME: tmp } });
    expect(r.code).toBe(1);
    const audit = join(tmp, "audit.html");
    const a = await runCar(["audit", "report", "runreport01", "--db", db, "-o", audit], { env: { CAR_HOME: tmp } });
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);

    const seen: string[][] = [];
    for (const path of [report, audit]) {
      const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
      await page.goto(pathToFileURL(path).href);
      const rows = await page.locator("svg g.row").evaluateAll((gs) => gs.map((g) => `${g.getAttribute("data-action-id")}:${g.getAttribute("data-status")}`));
      expect(rows).toEqual(["mark:succeeded", "fetch:succeeded", "one:succeeded", "two:succeeded", "wipe:rejected"]);
      seen.push(rows);
      expect(await page.locator('g.row[data-action-id="fetch"] line.retry').count()).toBe(1);
      expect(await page.locator('g.row[data-action-id="two"] rect.wait').count()).toBeGreaterThan(0);
      expect(await page.locator('g.row[data-action-id="wipe"] text.denial').count()).toBe(1);
      expect(await page.locator("g.row.rolled-back").count()).toBe(4);
      expect(await page.locator(".banner.rollback").innerText()).toContain("Rolled back");
      const durations = await page.locator("svg g.row text.ms").evaluateAll((ts) => ts.map((t) => t.textContent ?? ""));
      expect(durations.length).toBeGreaterThanOrEqual(4);
      expect(durations.filter((d) => !/^\d+ ms$/.test(d))).toEqual([]);
      const cost = (await page.locator("table.cost").innerText()).replace(/\s+/g, " ");
      expect(cost).toMatch(/tool_calls \d/);
      expect(cost).toContain("retries 1");
      expect(await page.locator("table.actions").innerText()).toContain("deny_tool_param:shell.command");
      const px = await pixels(page, "div.timeline");
      expect(px.colors).toBeGreaterThan(10);
      expect(px.inked / (px.width * px.height)).toBeGreaterThan(0.02);
      // Status colours: each status its own fill.
      const fills = await page
        .locator("svg g.row rect.bar")
        .evaluateAll((bars) => bars.map((b) => `${b.closest("g")!.getAttribute("data-status")}=${b.getAttribute("fill")}`));
      expect(new Set(fills)).toEqual(new Set(["succeeded=#16a34a", "rejected=#7f1d1d"]));
      await page.close();
    }
    expect(seen[0]).toEqual(seen[1]);
  }, 90_000);

  it("draws approval waits (car audit report): the span from the question to the answer, who decided and the decision", async () => {
    // `car run` has no approver to wait for; a library runtime with one writes the database the report reads.
    const db = join(tmp, "approvals.db");
    const answers: Record<string, { answer: ApprovalAnswer; ms: number }> = {
      edit: { answer: { decision: "approve", reviewer: "alice" }, ms: 600 },
      send: { answer: { decision: "deny", reviewer: "bob" }, ms: 300 },
    };
    const store = await openCarDatabase(db, { env: { CAR_HOME: tmp } });
    try {
      const gate = new ApprovalGate({
        ledger: store.approvals,
        sessionId: "report",
        grantedTier: "read_only",
        approver: (req) => new Promise((resolve) => setTimeout(() => resolve(answers[req.action.id]!.answer), answers[req.action.id]!.ms)),
      });
      const rt = new Runtime({ store: borrowedStore(store), approvalGate: gate });
      rt.registerTool({ name: "read_file" }, () => "text");
      rt.registerTool({ name: "write_file" }, () => "written");
      rt.registerTool({ name: "send_email" }, () => "sent");
      const ran = await rt.executeProposal({
        id: "approved01",
        actions: [
          { id: "look", type: "tool_call", tool: "read_file", parameters: { path: "a.txt" } },
          { id: "edit", type: "tool_call", tool: "write_file", parameters: { path: "a.txt", content: "x" }, dependencies: ["look"] },
        ],
      });
      expect(ran.results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
      const refused = await rt.executeProposal({
        id: "refused01",
        actions: [{ id: "send", type: "tool_call", tool: "send_email", parameters: { to: "a@b.c" } }],
      });
      expect(refused.results.map((r) => r.status)).toEqual(["rejected"]);
      await rt.close();
    } finally {
      await store.close();
    }

    const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
    const open = async (id: string) => {
      const out = join(tmp, `${id}.html`);
      const a = await runCar(["audit", "report", id, "--db", db, "-o", out], { env: { CAR_HOME: tmp } });
      expect(a.stderr).toBe("");
      expect(a.code).toBe(0);
      await page.goto(pathToFileURL(out).href);
    };
    const waitOf = (id: string) =>
      page.locator(`g.row[data-action-id="${id}"] rect.wait.approval`).evaluateAll((rs) =>
        rs.map((r) => ({
          ms: Number(r.getAttribute("data-wait-ms")),
          decision: r.getAttribute("data-decision"),
          reviewer: r.getAttribute("data-reviewer"),
          x: Number(r.getAttribute("x")),
          width: Number(r.getAttribute("width")),
          title: r.querySelector("title")?.textContent ?? "",
        })),
      );

    await open("approved01");
    // Only the action that needed a human waited; the read ran within the standing tier.
    expect(await page.locator('g.row[data-action-id="look"] rect.wait').count()).toBe(0);
    const [edit, ...more] = await waitOf("edit");
    expect(more).toEqual([]);
    expect(edit).toMatchObject({ decision: "allow", reviewer: "alice" });
    expect(edit!.ms).toBeGreaterThanOrEqual(590);
    expect(edit!.title).toBe(`waited ${edit!.ms} ms for approval: allow, decided by alice`);
    // Drawn to the run's scale: its width is its share of the axis (760 px for the whole run).
    const span = Number((await page.locator("svg text.axis").last().textContent())!.replace(" ms", ""));
    expect(Math.abs(edit!.width - (edit!.ms / span) * 760)).toBeLessThan(2);
    expect(edit!.width).toBeGreaterThan(50);
    // The tool ran after the answer: its bar starts where the wait ends.
    const bar = Number(await page.locator('g.row[data-action-id="edit"] rect.bar').getAttribute("x"));
    expect(bar).toBeGreaterThanOrEqual(edit!.x + edit!.width - 1);
    expect(await page.locator('g.row[data-action-id="edit"]').getAttribute("data-status")).toBe("succeeded");
    expect(await page.locator('g.row[data-action-id="edit"] text.wait-label').textContent()).toBe("allow · alice");
    expect(await page.locator('table.actions tr[data-action-id="edit"] td.approval').innerText()).toBe(edit!.title);
    expect(await page.locator("p.legend").innerText()).toContain("approval wait");
    const px = await pixels(page, "div.timeline");
    expect(px.colors).toBeGreaterThan(10);
    expect(px.inked / (px.width * px.height)).toBeGreaterThan(0.02);

    await open("refused01");
    const [send] = await waitOf("send");
    expect(send).toMatchObject({ decision: "deny", reviewer: "bob" });
    expect(send!.ms).toBeGreaterThanOrEqual(290);
    expect(await page.locator('g.row[data-action-id="send"]').getAttribute("data-status")).toBe("rejected");
    expect(await page.locator('g.row[data-action-id="send"] text.denial').count()).toBe(1);
    expect(await page.locator('table.actions tr[data-action-id="send"] td.approval').innerText()).toContain("deny, decided by bob");
    await page.close();
  });
});
