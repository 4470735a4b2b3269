import { describe, expect, test } from "vitest";
import { SAMPLE_SECRETS, sampleRun } from "../report/test-support.js";
import { renderLoadHtml } from "./charts.js";
import { runScenario } from "./scenario-run.js";
import { answer, deploymentAt, observing, recordingScenario } from "./test-support.js";

const target = deploymentAt("http://127.0.0.1:9/v1", { windowSeconds: 2 });

describe("the load report", () => {
  test("is named after the load command and carries the charts inline (no CDN)", async () => {
    // a 200 and a 429 a second later
    const report = await runScenario(
      target,
      recordingScenario(observing((at) => [answer(200, 3, at + 10), answer(429, 1, at + 1010)])),
    );
    expect(report.statusPerSecond).toEqual([
      { second: 0, statuses: { "200": 1 } },
      { second: 1, statuses: { "429": 1 } },
    ]);
    const html = renderLoadHtml(sampleRun(), { target, scenarios: [report], thresholds: [] });
    expect(html).toContain("<h1>agent-harness load ");
    expect(html).toContain("<svg");
    expect(html).not.toMatch(/<script[^>]+src=|https?:\/\/cdn/);
  });

  test("no key reaches the load section: a scenario's text is scrubbed as the run's is", async () => {
    const [key] = SAMPLE_SECRETS;
    const report = await runScenario(target, recordingScenario(observing((at) => [answer(200, 3, at + 10)])));
    const html = renderLoadHtml(
      sampleRun(),
      { target, scenarios: [{ ...report, message: `the server echoed ${key}` }], thresholds: [] },
      { secrets: [...SAMPLE_SECRETS] },
    );
    expect(html).toContain("the server echoed ***");
    expect(html).not.toContain(key);
  });

  test("admitted and refused latencies have a panel and table rows each, with their counts and the scenario's note", async () => {
    const report = await runScenario(
      target,
      recordingScenario(
        observing((at) => [
          ...Array.from({ length: 4 }, (_, i) => answer(200, 5, at + i)),
          ...Array.from({ length: 36 }, (_, i) => answer(429, 0.1, at + i)),
        ]),
        { note: "the 429s are intended", judged: true },
      ),
    );
    const html = renderLoadHtml(sampleRun(), { target, scenarios: [report], thresholds: [] });
    const panels = [...html.matchAll(/<figcaption>([^<]*latency[^<]*)<\/figcaption><svg.*?<\/svg>/g)];
    expect(panels.map((p) => p[1])).toEqual([
      "recorded: latency of 2xx admitted answers by percentile (HDR)",
      "recorded: latency of 429 refused answers by percentile (HDR)",
    ]);
    // the 2xx panel's line is the 5 ms answers alone; the refusals are dashed in their own panel
    expect(panels[0]?.[0]).toContain("GET /agents (p99 5.00, n 4)");
    expect(panels[0]?.[0]).not.toContain("stroke-dasharray");
    expect(panels[1]?.[0]).toContain("GET /agents (p99 0.10, n 36)");
    expect(panels[1]?.[0]).toContain("stroke-dasharray");
    const rows = [...html.matchAll(/<tr class="outcome-[^"]+">(.*?)<\/tr>/g)].map((m) =>
      [...(m[1] ?? "").matchAll(/<td>([^<]*)<\/td>/g)].map((c) => c[1]),
    );
    expect(rows).toEqual([
      ["GET /agents", "2xx admitted", "4* (10.0%)", "5.00", "5.00", "5.00", "5.00"],
      ["GET /agents", "429 refused", "36* (90.0%)", "0.10", "0.10", "0.10", "0.10"],
    ]);
    expect(html).toContain("* fewer than 100 answers: the p99 is about their maximum.");
    expect(html).toContain("Latency, per endpoint and outcome: the 429s are intended.");
    const waits = await runScenario(
      target,
      recordingScenario(
        observing((at) => [answer(200, 2000, at)]),
        { note: "mock-slow on purpose", judged: false },
        "waits",
      ),
    );
    expect(renderLoadHtml(sampleRun(), { target, scenarios: [waits], thresholds: [] })).toContain(
      "mock-slow on purpose (latency thresholds do not judge these figures).",
    );
    // 4 admitted among 40 answers (10%) still show in the stacked timeline: no panel of their own
    expect(html).not.toContain("admitted (2xx) answers per second");
  });

  test("admitted answers hidden under twenty times as many refusals get a timeline of their own", async () => {
    const report = await runScenario(
      target,
      recordingScenario(
        observing((at) => [
          answer(200, 5, at),
          answer(201, 5, at + 1000, "POST /agents"),
          ...Array.from({ length: 60 }, (_, i) => answer(429, 0.1, at + i * 20)),
        ]),
      ),
    );
    const html = renderLoadHtml(sampleRun(), { target, scenarios: [report], thresholds: [] });
    const panel = /<figcaption>recorded: admitted \(2xx\) answers per second, 2 of 62[^<]*<\/figcaption>(<svg.*?<\/svg>)/.exec(
      html,
    );
    expect(panel?.[1]).toContain("<title>second 0: 1 × 200</title>");
    expect(panel?.[1]).toContain("<title>second 1: 1 × 201</title>");
    expect(panel?.[1]).not.toContain("× 429");
  });
});
