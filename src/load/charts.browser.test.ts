import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ENDPOINTS as CONTRACT, ENDPOINT_LIST } from "../contract/index.js";
import { sampleRun } from "../report/test-support.js";
import { renderLoadHtml } from "./charts.js";
import { labelOf } from "./requests.js";
import { runScenario } from "./scenario-run.js";
import { answer, deploymentAt, recordingScenario } from "./test-support.js";

/**
 * The load report's charts are inline SVG with no CDN, checked in a real Chromium —
 * what a string test cannot see: that the page asks for nothing but itself, runs without an
 * error, and that every chart is drawn, on screen, with its lines, bars and labels inside its
 * frame (a legend too long for the chart is cut off in a browser, not in a string).
 * Needs Chromium (Debian's `chromium`, or CHROMIUM_PATH); CI (CI=true) fails without one instead
 * of skipping. The page's screenshot is left in reports/browser/ for a person to look at.
 */

const CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
const executablePath = CANDIDATES.find((p): p is string => !!p && existsSync(p));
const mustRun = process.env.CI === "true";
const skipNote = "Chromium is not installed; `apt-get install chromium` (as .ci/run does) or set CHROMIUM_PATH";
if (!executablePath && !mustRun) console.warn(`SKIPPED: ${skipNote}`);

test("Chromium is there for the report's browser checks", (context) => {
  if (!executablePath && !mustRun) context.skip(skipNote);
  expect(executablePath, `Chromium is required when CI=true: ${skipNote}`).toBeDefined();
});

const target = deploymentAt("http://127.0.0.1:9/v1", { windowSeconds: 2, messageTimeoutSeconds: 30 });
/** Every endpoint, labelled as the load run labels it (the legends' longest lines). */
const ENDPOINTS = ENDPOINT_LIST.map((ep) => labelOf({ endpoint: ep.id }));
const MESSAGES = labelOf({ endpoint: CONTRACT.sendMessage.id });

/** A load report as a real run makes one: a throughput profile where the limits hold, and streams. */
async function loadReportHtml(): Promise<string> {
  const throughput = await runScenario(
    target,
    recordingScenario(
      (recorder) => {
        for (let second = 0; second < 12; second++)
          for (const [i, endpoint] of ENDPOINTS.entries()) {
            const at = recorder.startedAt + second * 1000 + i;
            // the buckets admit a few each window (12, then 2); every other answer is a 429
            for (let n = 0; n < (second % 2 ? 2 : 12); n++) recorder.observe(answer(200, 0.6 + i * 0.4 + n * 0.05, at, endpoint));
            for (let n = 0; n < 2600; n++) recorder.observe(answer(429, 0.3 + (n % 50) * 0.02, at, endpoint));
          }
      },
      { note: "every endpoint, one after another", judged: true },
      "throughput",
    ),
  );
  const streams = await runScenario(
    target,
    recordingScenario(
      (recorder) => {
        for (let n = 0; n < 460; n++) {
          recorder.streams.ttfb.recordValue(11_000 + (n % 20) * 600);
          recorder.streams.firstDelta.recordValue(107_000 + (n % 20) * 900);
          recorder.streams.gap.recordValue(100_000 + (n % 10) * 500);
          recorder.streams.total.recordValue(2_020_000 + (n % 10) * 1000);
          recorder.observe(answer(200, 2020 + (n % 10), recorder.startedAt + 2020, MESSAGES));
        }
        recorder.streams.ended.done = 450;
        recorder.streams.ended.error = 10;
      },
      { note: "streams held to the budget", judged: false },
      "streams-at-budget",
    ),
  );
  return renderLoadHtml(sampleRun(), {
    target,
    scenarios: [throughput, streams],
    thresholds: [
      {
        source: "p99<250",
        passed: true,
        judged: true,
        observed: "GET /agents/{agentId} p99 2.2 ms over 61 2xx admitted answers",
      },
    ],
  });
}

/** What the page shows of each chart, measured by the browser (a string: the repo's types have no DOM). */
const MEASURE_CHARTS = `[...document.querySelectorAll("#load figure")].map((fig) => {
  const svg = fig.querySelector("svg");
  const box = svg.getBoundingClientRect();
  const inside = (r) => r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5;
  const drawn = (selector) => [...svg.querySelectorAll(selector)].map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0 || r.height > 0);
  return {
    caption: fig.querySelector("figcaption")?.textContent ?? "",
    width: Math.round(box.width),
    height: Math.round(box.height),
    shown: getComputedStyle(svg).visibility === "visible" && getComputedStyle(svg).display !== "none",
    // the data (class "mark": a percentile line, a bar), not the legend's swatches or the grid
    marks: drawn(".mark").length,
    marksOutside: drawn("polyline, rect, line").filter((r) => !inside(r)).length,
    textsCut: [...svg.querySelectorAll("text")].filter((t) => !inside(t.getBoundingClientRect())).map((t) => t.textContent),
  };
})`;

describe.skipIf(!executablePath)("the load report in Chromium", () => {
  let browser: Browser;
  const requested: string[] = [];
  const errors: string[] = [];
  let charts: Array<{
    caption: string;
    width: number;
    height: number;
    shown: boolean;
    marks: number;
    marksOutside: number;
    textsCut: string[];
  }>;
  let pageUrl: string;

  beforeAll(async () => {
    const dir = join("reports", "browser");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "load-report.html");
    writeFileSync(file, await loadReportHtml());
    pageUrl = pathToFileURL(file).href;
    // as root (CI) Chromium's sandbox cannot start
    browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("request", (r) => requested.push(r.url()));
    page.on("console", (m) => (m.type() === "error" ? errors.push(m.text()) : undefined));
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(pageUrl, { waitUntil: "load" });
    charts = await page.evaluate(MEASURE_CHARTS);
    await page.screenshot({ path: join(dir, "load-report.png"), fullPage: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  test("self-contained: the page asks for nothing but itself, and runs without an error", () => {
    expect(requested).toEqual([pageUrl]);
    expect(errors).toEqual([]);
  });

  test("every chart the run calls for is drawn: the timelines, an HDR panel per outcome, the stream timings", () => {
    const startsWith = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix.replace(/[()]/g, "\\$&")}`));
    expect(charts.map((c) => c.caption)).toEqual(
      [
        "throughput: statuses per second",
        "throughput: admitted (2xx) answers per second",
        "throughput: latency of 2xx admitted answers",
        "throughput: latency of 429 refused answers",
        "streams-at-budget: statuses per second",
        "streams-at-budget: latency of 2xx admitted answers",
        "streams-at-budget: stream timings by percentile",
      ].map(startsWith),
    );
    for (const c of charts) {
      expect(c.shown && c.width >= 400 && c.height >= 150, `${c.caption}: on screen, ${c.width}×${c.height}`).toBe(true);
      expect(c.marks, `${c.caption}: lines or bars drawn`).toBeGreaterThan(0);
    }
  });

  test("lines, bars and every label stay inside their chart (nothing cut off)", () => {
    for (const c of charts) {
      expect(c.marksOutside, `${c.caption}: marks outside the frame`).toBe(0);
      expect(c.textsCut, `${c.caption}: labels cut off`).toEqual([]);
    }
  });
});
