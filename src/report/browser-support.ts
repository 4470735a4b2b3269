import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";

/**
 * Reports checked in a real Chromium (Debian's `chromium`, or CHROMIUM_PATH), driven by
 * playwright-core, which downloads no browser of its own. Under CI=true a missing Chromium fails
 * the check instead of skipping it. Screenshots go to reports/browser/ for a person to look at.
 */
const CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
export const chromiumPath = CANDIDATES.find((p): p is string => !!p && existsSync(p));
export const chromiumRequired = process.env.CI === "true";
export const NO_CHROMIUM = "Chromium is not installed; `apt-get install chromium` (as .ci/run does) or set CHROMIUM_PATH";
export const SCREENSHOT_DIR = join("reports", "browser");

/** A report page as the browser loaded it, and what it asked for and complained about on the way. */
export interface OpenedPage {
  page: Page;
  url: string;
  /** every URL the page requested, itself first */
  requested: string[];
  /** console errors and uncaught exceptions */
  errors: string[];
}

export async function launchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // as root (CI) Chromium's sandbox cannot start
  return chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
}

/** Open a report file at a desktop width, recording requests and errors; screenshots as `shot`(-first-screen).png. */
export async function openReport(browser: Browser, file: string, shot: string): Promise<OpenedPage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const opened: OpenedPage = { page, url: pathToFileURL(file).href, requested: [], errors: [] };
  page.on("request", (r) => opened.requested.push(r.url()));
  page.on("console", (m) => (m.type() === "error" ? opened.errors.push(m.text()) : undefined));
  page.on("pageerror", (e) => opened.errors.push(e.message));
  await page.goto(opened.url, { waitUntil: "load" });
  // what a person sees first, and the whole page
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${shot}-first-screen.png`) });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${shot}.png`), fullPage: true });
  return opened;
}
