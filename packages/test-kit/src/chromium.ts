/**
 * Headless Chromium for the HTML views' tests (playwright-core drives the
 * system's /usr/bin/chromium), and a pixel count of a screenshot so a test
 * can tell a drawing from a blank page.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`HTML view tests: skipped — ${CHROMIUM} is not installed (apt-get install -y chromium)`);

export interface PixelCount {
  width: number;
  height: number;
  colors: number;
  inked: number;
  reddish: number;
}

/** Runs in the page: decodes a PNG and counts its colors and non-white pixels. */
export const COUNT_PIXELS = `async (b64) => {
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

/** Launches headless Chromium with the flags CI needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}
