import { describe, expect, test } from "vitest";
import type { HistogramSummary } from "./recorder.js";
import { runScenario } from "./scenario-run.js";
import { answer, deploymentAt, observing, recordingScenario } from "./test-support.js";
import { evaluateThreshold, parseThreshold, type Threshold, thresholdInputOf } from "./thresholds.js";

const parsed = (s: string) => parseThreshold(s) as Threshold;
const figure = (p50: number, p99: number, count: number): HistogramSummary => ({
  count,
  minMs: p50,
  meanMs: p50,
  maxMs: p99 + 100,
  percentiles: { p50, p99 },
  distribution: [],
});
/** the admitted answers are slow on one endpoint; the refusals are fast everywhere and outnumber them */
const input = {
  latency: [
    {
      scenario: "throughput",
      endpoints: {
        "GET /agents/{agentId}": { "2xx": figure(1, 300, 10), "429": figure(0.1, 1, 5000) },
        "GET /agents": { "2xx": figure(1, 20, 10), "429": figure(0.1, 400, 5000) },
      },
    },
  ],
  responses: 2000,
  errors: 1,
  durationSeconds: 10,
};

describe("load thresholds", () => {
  test("parse the k6-style forms, with an outcome for latency, and refuse the rest with a reason", () => {
    expect(parsed("p99<250")).toMatchObject({ metric: "p99", outcome: "2xx", op: "<", value: 250 });
    expect(parsed("p99[429]<50")).toMatchObject({ metric: "p99", outcome: "429", op: "<", value: 50 });
    expect(parsed("max[other] <= 9")).toMatchObject({ metric: "max", outcome: "other", op: "<=", value: 9 });
    expect(parsed("errors<0.1%")).toMatchObject({ metric: "errors", op: "<", value: 0.001 });
    expect(parsed(" rps >= 100 ")).toMatchObject({ metric: "rps", op: ">=", value: 100 });
    for (const bad of ["p98<1", "p99", "errors<1", "p99<5%", "latency<3", "p99[5xx]<1", "p99[]<1", "errors[429]<1%"])
      expect(typeof parseThreshold(bad), bad).toBe("string");
  });

  test("a latency threshold judges the admitted (2xx) answers of every endpoint, never the 429s", () => {
    const p99 = evaluateThreshold(parsed("p99<250"), input);
    expect(p99.passed).toBe(false);
    // the slow admitted answers break it though 5,000 fast refusals came with them
    expect(p99.observed).toBe("throughput GET /agents/{agentId} p99 300 ms over 10 2xx admitted answers");
    expect(evaluateThreshold(parsed("p99<500"), input)).toMatchObject({
      passed: true,
      observed:
        "2 endpoint figure(s) within it; the closest: throughput GET /agents/{agentId} p99 300 ms over 10 2xx admitted answers",
    });
    // the 429s' own figures only when named: here a slow refusal on List
    expect(evaluateThreshold(parsed("p99[429]<250"), input)).toMatchObject({
      passed: false,
      observed: "throughput GET /agents p99 400 ms over 5000 429 refused answers",
    });
  });

  test("a latency threshold with no answer of its outcome to judge has no verdict: neither passed nor failed", () => {
    expect(evaluateThreshold(parsed("p99[other]<250"), input)).toMatchObject({
      passed: false,
      judged: false,
      observed: "no other statuses answers to judge in throughput",
    });
  });

  test("errors and rps are judged over the whole run", () => {
    expect(evaluateThreshold(parsed("errors<0.1%"), input).passed).toBe(true); // 0.05%
    expect(evaluateThreshold(parsed("errors<0.01%"), input).passed).toBe(false);
    expect(evaluateThreshold(parsed("rps>100"), input).passed).toBe(true); // 200/s
    expect(evaluateThreshold(parsed("rps>300"), input).passed).toBe(false);
  });

  test("the latency judged is the latency profile's when it ran, else every scenario's without intended waits", async () => {
    const target = deploymentAt("http://127.0.0.1:9/v1", { windowSeconds: 2 });
    const fast = observing((at) => [answer(200, 5, at)]);
    const slow = observing((at) => [answer(200, 2000, at)]);
    const bursts = await runScenario(target, recordingScenario(fast, { note: "", judged: true }, "bucket-getAgent"));
    const waits = await runScenario(target, recordingScenario(slow, { note: "", judged: false }, "concurrency-bursts"));
    const profile = await runScenario(target, recordingScenario(fast, { note: "", judged: true, profile: true }, "throughput"));
    const scenariosOf = (reports: Parameters<typeof thresholdInputOf>[0]) =>
      thresholdInputOf(reports).latency.map((l) => l.scenario);
    expect(scenariosOf([bursts, waits, profile])).toEqual(["throughput"]);
    expect(scenariosOf([bursts, waits])).toEqual(["bucket-getAgent"]);
    expect(scenariosOf([bursts, waits, { ...profile, status: "skipped" }])).toEqual(["bucket-getAgent"]);
    expect(evaluateThreshold(parsed("p99<250"), thresholdInputOf([bursts, waits])).passed).toBe(true);
  });
});
