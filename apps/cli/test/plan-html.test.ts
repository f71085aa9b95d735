/**
 * The HTML plan drawn by `car verify --format html`, opened in a real
 * headless Chromium: every action id is on the page, findings are
 * highlighted, and the screenshot is a drawing rather than a blank page.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";

const CHROMIUM = "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`plan-html.test.ts: skipped — ${CHROMIUM} is not installed (apt-get install -y chromium)`);

interface PixelCount {
  width: number;
  height: number;
  colors: number;
  inked: number;
  reddish: number;
}

/** Runs in the page: decodes a PNG and counts its colors and non-white pixels. */
const COUNT_PIXELS = `async (b64) => {
  const img = new Image();
  img.src = "data:image/png;base64," + b64;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = img.width;
  canvas.height = img.height;
  const ctx = canvas.getContext("2d");
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, img.width, img.height).data;
  const colors = new Set();
  let inked = 0;
  for (let i = 0; i < data.length; i += 4) {
    const r = data[i], g = data[i + 1], b = data[i + 2];
    colors.add((r << 16) | (g << 8) | b);
    if (r < 240 || g < 240 || b < 240) inked++;
  }
  const reddish = [...colors].filter((c) => (c >> 16) > 200 && ((c >> 8) & 255) < 120 && (c & 255) < 120).length;
  return { width: img.width, height: img.height, colors: colors.size, inked, reddish };
}`;

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

describe.skipIf(!haveChromium)("the HTML plan in headless Chromium", () => {
  let browser: Browser;
  const tmp = mkdtempSync(join(tmpdir(), "car-html-"));

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
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
