import { describe, expect, test } from "vitest";
import { LoadRecorder, outcomeOf } from "./recorder.js";
import { formatLatency, runScenario } from "./scenario-run.js";
import { answer, deploymentAt, observing, recordingScenario } from "./test-support.js";

const target = deploymentAt("http://127.0.0.1:9/v1", { windowSeconds: 2 });

/** 100 admitted answers at 5 ms among 900 refusals at 0.1 ms: the refusals outnumber the work nine to one. */
const mixed = (at: number) => [
  ...Array.from({ length: 100 }, (_, i) => answer(200, 5, at + i)),
  ...Array.from({ length: 900 }, (_, i) => answer(429, 0.1, at + i)),
  answer(404, 2, at),
];

describe("latency per endpoint and outcome (PROFILE §7: a 429 is answered at once)", () => {
  test("outcomes: 2xx admitted, 429 refused, everything else", () => {
    expect([200, 201, 204, 429, 400, 404, 500, 503].map(outcomeOf)).toEqual([
      "2xx",
      "2xx",
      "2xx",
      "429",
      "other",
      "other",
      "other",
      "other",
    ]);
  });

  test("the 2xx figures are the admitted answers' alone, however many 429s come with them", () => {
    const recorder = new LoadRecorder(target, "mixed");
    for (const a of mixed(recorder.startedAt)) recorder.observe(a);
    recorder.generatorHealth();
    const figures = recorder.latencySummary()["GET /agents"];
    expect(figures?.["2xx"]).toMatchObject({ count: 100, minMs: 5, maxMs: 5, percentiles: { p50: 5, p99: 5 } });
    expect(figures?.["429"]).toMatchObject({ count: 900, maxMs: 0.1, percentiles: { p50: 0.1, p99: 0.1 } });
    expect(figures?.other).toMatchObject({ count: 1, maxMs: 2, percentiles: { p50: 2 } });
  });

  test("a percentile never reads above the largest answer recorded (HDR answers a bucket's top)", () => {
    const recorder = new LoadRecorder(target, "top");
    for (const ms of [1, 2, 30_019]) recorder.observe(answer(200, ms, recorder.startedAt));
    recorder.generatorHealth();
    const figure = recorder.latencySummary()["GET /agents"]?.["2xx"];
    expect(figure?.maxMs).toBe(30_019);
    expect(figure?.percentiles["p99.9"]).toBe(30_019);
    expect(Math.max(...(figure?.distribution ?? []).map((d) => d.ms))).toBe(30_019);
  });

  test("a warm-up's answers are counted and in the timeline, but not in the latency figures", () => {
    const recorder = new LoadRecorder(target, "warm");
    const at = recorder.startedAt;
    recorder.observe(answer(200, 90, at), false);
    recorder.observe(answer(200, 3, at));
    recorder.generatorHealth();
    expect(recorder.latencySummary()["GET /agents"]?.["2xx"]).toMatchObject({ count: 1, maxMs: 3 });
    expect(recorder.conformance.responses).toBe(2);
    expect(recorder.statusPerSecond.get(0)?.get(200)).toBe(2);
  });

  test("an endpoint's outcomes stay apart from another endpoint's", () => {
    const recorder = new LoadRecorder(target, "two");
    const at = recorder.startedAt;
    recorder.observe(answer(200, 8, at, "GET /agents/{agentId}"));
    recorder.observe(answer(429, 0.2, at, "GET /agents"));
    recorder.generatorHealth();
    expect(Object.keys(recorder.latencySummary()["GET /agents/{agentId}"] ?? {})).toEqual(["2xx"]);
    expect(Object.keys(recorder.latencySummary()["GET /agents"] ?? {})).toEqual(["429"]);
  });

  test("load.json and the CLI give each outcome's figures with the answers they rest on, and the scenario's note", async () => {
    const report = await runScenario(target, recordingScenario(observing(mixed), { note: "a note on waits", judged: false }));
    expect(report.latency["GET /agents"]?.["2xx"]?.percentiles.p50).toBe(5);
    expect(report).toMatchObject({ latencyNote: "a note on waits", latencyJudged: false });
    const lines = formatLatency(report);
    expect(lines[0]).toContain("a note on waits");
    expect(lines[1]).toMatch(
      /GET \/agents {2}2xx 5\.00 \/ 5\.00 \(100\) · 429 0\.10 \/ 0\.10 \(900\) · other 2\.00 \/ 2\.00 \(1\*\)/,
    );
    // a figure on a single answer is marked: its p99 is that answer
    expect(lines.at(-1)).toBe("  * fewer than 100 answers: the p99 is about their maximum");
  });

  test("where a scenario streamed, the CLI gives the stream timings with how many each rests on", async () => {
    const report = await runScenario(
      target,
      recordingScenario((recorder) => {
        observing((at) => [answer(200, 2000, at, "POST /agents/{agentId}/messages")])(recorder);
        const { streams } = recorder;
        streams.ttfb.recordValue(12_000);
        streams.firstDelta.recordValue(100_000);
        for (const gap of [90_000, 110_000]) streams.gap.recordValue(gap);
        streams.total.recordValue(2_000_000);
        streams.ended.done++;
      }),
    );
    expect(formatLatency(report).at(-1)).toMatch(
      /^streams p50 \/ p99 ms \(count\): TTFB 12\.0 \/ 12\.0 \(1\) · first delta 100 \/ 100 \(1\) · gap 90\.0 \/ 110 \(2\) · total 2000 \/ 2000 \(1\); ended 1 done, 0 error, 0 neither$/,
    );
  });

  test("a 429 is not an error: errors counts 5xx and each failed request", async () => {
    const report = await runScenario(
      target,
      recordingScenario((recorder) => {
        observing((at) => [answer(429, 1, at), answer(503, 1, at), answer(200, 1, at)])(recorder);
        recorder.transportError("GET /agents: request timed out");
        recorder.transportError("GET /agents: request timed out");
      }),
    );
    expect(report.errors).toBe(3);
  });
});
