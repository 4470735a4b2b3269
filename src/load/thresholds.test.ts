import { describe, expect, test } from "vitest";
import { evaluateThreshold, parseThreshold, type Threshold } from "./thresholds.js";

const parsed = (s: string) => parseThreshold(s) as Threshold;
const input = {
  latency: {
    "GET /agents/:agentId": { percentiles: { p50: 1, p99: 300 }, maxMs: 400, meanMs: 2, count: 10 },
    "GET /agents": { percentiles: { p50: 1, p99: 20 }, maxMs: 30, meanMs: 2, count: 10 },
  },
  responses: 2000,
  errors: 1,
  durationSeconds: 10,
};

describe("load thresholds", () => {
  test("parse the k6-style forms and refuse the rest with a reason", () => {
    expect(parsed("p99<250")).toMatchObject({ metric: "p99", op: "<", value: 250 });
    expect(parsed("errors<0.1%")).toMatchObject({ metric: "errors", op: "<", value: 0.001 });
    expect(parsed(" rps >= 100 ")).toMatchObject({ metric: "rps", op: ">=", value: 100 });
    for (const bad of ["p98<1", "p99", "errors<1", "p99<5%", "latency<3"]) expect(typeof parseThreshold(bad)).toBe("string");
  });

  test("a latency threshold holds only when every endpoint keeps it", () => {
    expect(evaluateThreshold(parsed("p99<250"), input)).toMatchObject({ passed: false });
    expect(evaluateThreshold(parsed("p99<250"), input).observed).toContain("GET /agents/:agentId p99 300");
    expect(evaluateThreshold(parsed("p99<500"), input).passed).toBe(true);
  });

  test("errors and rps are judged over the whole run", () => {
    expect(evaluateThreshold(parsed("errors<0.1%"), input).passed).toBe(true); // 0.05%
    expect(evaluateThreshold(parsed("errors<0.01%"), input).passed).toBe(false);
    expect(evaluateThreshold(parsed("rps>100"), input).passed).toBe(true); // 200/s
    expect(evaluateThreshold(parsed("rps>300"), input).passed).toBe(false);
  });
});
