import { describe, expect, test } from "vitest";
import { sampleRun } from "../report/test-support.js";
import { renderLoadHtml } from "./charts.js";
import { runScenario } from "./run.js";
import { deploymentAt } from "./test-support.js";

describe("the load report", () => {
  test("is named after the load command and carries the charts inline (no CDN)", async () => {
    const target = deploymentAt("http://127.0.0.1:9/v1", { windowSeconds: 2 });
    // a scenario that only records answers: a 200 and a 429 a second later
    const report = await runScenario(target, {
      id: "chart",
      title: "a chart",
      clauses: ["limits.429"],
      estimateSeconds: () => 1,
      run: async (ctx) => {
        const at = ctx.recorder.startedAt;
        const answer = {
          method: "GET",
          url: "http://127.0.0.1:9/v1/agents",
          endpoint: "GET /agents",
          headers: {},
          bodyText: "",
          json: undefined,
        };
        ctx.recorder.observe({ ...answer, status: 200, receivedAt: at + 10, latencyMs: 3 });
        ctx.recorder.observe({ ...answer, status: 429, receivedAt: at + 1010, latencyMs: 1 });
      },
    });
    expect(report.statusPerSecond).toEqual([
      { second: 0, statuses: { "200": 1 } },
      { second: 1, statuses: { "429": 1 } },
    ]);
    const html = renderLoadHtml(sampleRun(), { target, scenarios: [report], thresholds: [] });
    expect(html).toContain("<h1>agent-harness load ");
    expect(html).toContain("<svg");
    expect(html).not.toMatch(/<script[^>]+src=|https?:\/\/cdn/);
  });
});
