import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  chromiumPath,
  chromiumRequired,
  launchChromium,
  NO_CHROMIUM,
  openReport,
  SCREENSHOT_DIR,
} from "../../src/report/browser-support.js";
import { renderHtml } from "../../src/report/index.js";
import { SAMPLE_OPTIONS, sampleRun } from "../../src/report/test-support.js";
import { cleanDefaultRun } from "./clean-run.js";
import { redItems, verify } from "./verify-run.js";

/**
 * The main job's report as its reader first sees it, in a real Chromium: real `verify` runs (the
 * default embedded run, a --suites run, a smoke run, a run with an injected fault) rendered to
 * report.html and measured in the browser — the header fits above the fold, no text runs out of
 * its box, a finding reads in words (never a matcher's "expected 0 to be greater than 0"), and the
 * page asks for nothing but itself and logs no error. Screenshots land in reports/browser/.
 */

/** The header (title, target, options, the count cards) on a 1280×900 screen: room left for the findings. */
const HEADER_MAX_PX = 420;

/** A test framework's wording, which a finding must translate: `expected '' to match /\S/`, `// Object.is equality`. */
const MATCHER_TEXT =
  /expected .{1,200}? to (?:be|match|equal|deeply equal|have|contain|include|satisfy)\b|Object\.is|\.to(?:Be|Equal|Match)\b|^[-+] (?:Expected|Received)/m;

/** What the page shows, measured by the browser (a string: the repo's types have no DOM). */
const MEASURE_PAGE = `(() => {
  const own = (el) => {
    const s = getComputedStyle(el);
    return s.display !== "inline" && s.overflowX === "visible" && el.clientWidth > 0;
  };
  const overflowing = [...document.querySelectorAll("body *")]
    .filter((el) => el.getClientRects().length > 0 && own(el) && el.scrollWidth > el.clientWidth + 1)
    .map((el) => el.tagName.toLowerCase() + (el.className ? "." + el.className : "") + ": " + (el.textContent || "").slice(0, 80));
  return {
    headerHeight: Math.round(document.querySelector("header").getBoundingClientRect().height),
    pageWidth: document.documentElement.scrollWidth,
    overflowing,
    findingsText: document.querySelector("#findings").innerText,
  };
})()`;

interface Layout {
  headerHeight: number;
  pageWidth: number;
  overflowing: string[];
  findingsText: string;
}

test("Chromium is there for the report's browser checks", (context) => {
  if (!chromiumPath && !chromiumRequired) context.skip(NO_CHROMIUM);
  expect(chromiumPath, `Chromium is required when CI=true: ${NO_CHROMIUM}`).toBeDefined();
});

describe.skipIf(!chromiumPath)("the verify report in Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  async function measure(file: string, shot: string) {
    const opened = await openReport(browser, file, shot);
    const layout: Layout = await opened.page.evaluate(MEASURE_PAGE);
    await opened.page.close();
    return { ...opened, layout };
  }

  function expectReadable(shown: Awaited<ReturnType<typeof measure>>) {
    expect(shown.requested, "the page asks for nothing but itself").toEqual([shown.url]);
    expect(shown.errors, "the page logs no error").toEqual([]);
    expect(shown.layout.headerHeight, "header height (px)").toBeLessThanOrEqual(HEADER_MAX_PX);
    expect(shown.layout.pageWidth, "page width (px)").toBeLessThanOrEqual(1280);
    expect(shown.layout.overflowing, "text running out of its box").toEqual([]);
    expect(shown.layout.findingsText, "a finding in a matcher's words").not.toMatch(MATCHER_TEXT);
  }

  // one after another, with the run's own workers: the §7 timing checks of a run need the cores
  describe("real runs", () => {
    test.for([
      ["default", [], 0],
      // options in the header: a suite and sections chosen (two small sections: the page is the point)
      ["suites", ["--suites", "functional", "--sections", "§1,§2"], 0],
      ["smoke", ["--profile", "smoke"], 0],
      // the fault breaks §2's error envelope; its section's checks are the ones that see it
      ["fault", ["--suites", "functional", "--sections", "§2", "--fault", "error-as-string"], 1],
    ] as const)(
      "%s run: a header that fits, nothing overflowing, findings in words, a self-contained page",
      { timeout: 600_000 },
      async ([name, args, findings]) => {
        // the default run is the one the fault runs read too: made once for the project's files
        const run = await (args.length ? verify([...args]) : cleanDefaultRun());
        expect(run.code, run.output.slice(-2000)).toBe(findings ? 1 : 0);
        expect(run.results.findings?.length ?? 0).toBe(findings);
        // one defect: at most three red items in all, the first citing the broken clause
        expect(redItems(run)).toBeLessThanOrEqual(3);
        if (findings) expect(run.results.findings?.[0]?.clauseIds).toContain("envelope.error");
        expectReadable(await measure(join(run.runDir, "report.html"), `verify-${name}`));
      },
    );
  });

  test("the check can fail: a finding in a matcher's words is seen in the page", async () => {
    const file = join(SCREENSHOT_DIR, "verify-matcher-finding.html");
    const finding = {
      id: "F1",
      kind: "check" as const,
      check: "a check",
      clauseIds: ["auth.required"],
      sections: ["§6"],
      endpoints: ["POST /agents"],
      message: "PROFILE §6 auth.required: expected 0 to be greater than 0 // Object.is equality",
      occurrences: 1,
      seenIn: ["a check"],
      blocked: [],
      evidence: [],
    };
    writeFileSync(file, renderHtml(sampleRun({ findings: [finding] })));
    const shown = await measure(file, "verify-matcher-finding");
    expect(shown.layout.findingsText).toMatch(MATCHER_TEXT);
  });

  test("the check can fail: a header that prints a results object as its options is too tall", async () => {
    const results = JSON.stringify(sampleRun()).repeat(6);
    const file = join(SCREENSHOT_DIR, "verify-json-header.html");
    writeFileSync(file, renderHtml(sampleRun({ options: { ...SAMPLE_OPTIONS, faults: [results] } })));
    const shown = await measure(file, "verify-json-header");
    expect(shown.layout.headerHeight).toBeGreaterThan(HEADER_MAX_PX);
  });
});
