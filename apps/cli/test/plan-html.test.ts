/**
 * The HTML plan drawn by `car verify --format html`, opened in a real
 * headless Chromium: every action id is on the page, findings are
 * highlighted, and the screenshot is a drawing rather than a blank page.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNT_PIXELS, haveChromium, launchChromium, type PixelCount } from "@car/test-kit/chromium";
import { runCar } from "./run-car.ts";

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

describe.skipIf(!haveChromium)("the HTML plan in headless Chromium", () => {
  let browser: Browser;
  const tmp = mkdtempSync(join(tmpdir(), "car-html-"));

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("shows every action id, the findings and a non-trivial drawing", async () => {
    const out = join(tmp, "findings.html");
    const r = await runCar(["verify", fixture("findings.json"), "--format", "html", "--output", out]);
    expect(r.code).toBe(1);

    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const requests: string[] = [];
    page.on("request", (req) => requests.push(req.url()));
    await page.goto(pathToFileURL(out).href);

    const ids = await page.locator("svg g.action").evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-action-id")));
    expect(ids).toEqual(["fetch", "cache-a", "cache-b", "publish"]);
    const svgText = await page.locator("svg").textContent();
    for (const id of ["fetch", "cache-a", "cache-b", "publish"]) expect(svgText).toContain(id);
    expect(svgText).toContain("conflict: cache");
    expect(await page.locator('g.action.error[data-action-id="publish"]').count()).toBe(1);
    expect(await page.locator("path.edge").count()).toBe(1);
    expect(await page.locator("table tbody tr.error").count()).toBe(1);
    // Self-contained: the page fetched nothing but itself.
    expect(requests).toEqual([pathToFileURL(out).href]);

    const shot = await page.locator("div.plan").screenshot();
    expect(shot.length).toBeGreaterThan(3000);
    // Decode the screenshot in the page and count what is drawn.
    const pixels = (await page.evaluate(`(${COUNT_PIXELS})(${JSON.stringify(shot.toString("base64"))})`)) as PixelCount;
    expect(pixels.width).toBeGreaterThan(400);
    expect(pixels.colors).toBeGreaterThan(20);
    expect(pixels.inked / (pixels.width * pixels.height)).toBeGreaterThan(0.02);
    expect(pixels.reddish).toBeGreaterThan(0);
    await page.close();
  });

  it("lays a valid plan out one column per level", async () => {
    const out = join(tmp, "deploy.html");
    const r = await runCar(["verify", fixture("deploy.json"), "--format", "html", "--output", out]);
    expect(r.code).toBe(0);
    const page = await browser.newPage();
    await page.goto(pathToFileURL(out).href);
    expect(await page.locator(".verdict.valid").count()).toBe(1);
    const boxes = await page.locator("svg g.action rect").evaluateAll((rects) => rects.map((r) => Number(r.getAttribute("x"))));
    expect(boxes).toHaveLength(4);
    expect(new Set(boxes).size).toBe(4);
    expect([...boxes].sort((a, b) => a - b)).toEqual(boxes);
    expect(await page.locator("path.edge").count()).toBe(4);
    await page.close();
  });
});
