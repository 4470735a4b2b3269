import { describe, expect, test } from "vitest";
import { mulberry32 } from "../../arbitraries/mulberry32.js";
import { FLOOD_SHORT, type FloodOutcome } from "../capacity/floods.js";
import { type CapacitySettings, CapacityTally, encodeHistogram } from "../capacity/tally.js";
import { loadSection } from "../charts.js";
import { newHistogram, summarizeHistogram } from "../recorder.js";
import type { ScenarioReport } from "../scenario-run.js";
import { mergeReports } from "./merge.js";

const SEED = 20_261_126;
const SETTINGS: CapacitySettings = {
  profile: "steady",
  share: 0.8,
  durationSeconds: 10,
  rampSeconds: 1,
  intervalSeconds: 1,
  tenants: 2,
  keys: 8,
  offeredPerSecond: 10,
};

/** One shard's report of `samples` (µs): every figure from them, and them encoded. */
function shard(index: number, samples: readonly number[]): ScenarioReport {
  const h = newHistogram();
  const tally = new CapacityTally();
  for (const us of samples) {
    h.recordValue(us);
    tally.tenant(`acct_${index}`).latency.recordValue(us);
    tally.interval(0, "GET /agents").recordValue(us);
  }
  tally.counts.admitted = samples.length;
  const stream = encodeHistogram(newHistogram());
  return {
    id: "capacity",
    title: "capacity",
    clauses: ["limits.tier"],
    status: "passed",
    durationMs: 1000,
    failures: [{ clause: "limits.tier", check: "capacity", expected: "x", received: `shard ${index}`, count: 2 }],
    observations: [],
    latency: { "GET /agents": { "2xx": summarizeHistogram(h) } },
    latencyNote: "",
    latencyJudged: true,
    statusPerSecond: [{ second: 0, statuses: { "200": samples.length } }],
    conformance: { responses: samples.length, checked: samples.length, share: 1, sampling: "every response" },
    transportErrors: {},
    rps: samples.length,
    errors: 0,
    generator: { eventLoopLagP99Ms: index, eventLoopLagMaxMs: index, cpuShare: 0.1, saturated: false, note: `shard ${index}` },
    mergeable: {
      latency: { "GET /agents": { "2xx": encodeHistogram(h) } },
      streams: { ttfb: stream, firstDelta: stream, gap: stream, total: stream },
      tally: tally.toJSON(),
      settings: { ...SETTINGS, shard: { index, count: 3 } },
    },
  };
}

describe("merging shards", () => {
  test(`merged percentiles are those of one histogram of every sample (seed ${SEED})`, () => {
    const random = mulberry32(SEED);
    // three shards with different distributions: a fast one, a slow one, a long-tailed one
    const shards = [
      Array.from({ length: 5000 }, () => 500 + Math.floor(random() * 2000)),
      Array.from({ length: 3000 }, () => 20_000 + Math.floor(random() * 5000)),
      Array.from({ length: 2000 }, () => Math.floor(1 + random() ** 8 * 2_000_000)),
    ];
    const all = newHistogram();
    for (const us of shards.flat()) all.recordValue(us);
    const merged = mergeReports(shards.map((samples, i) => shard(i, samples)));
    const one = summarizeHistogram(all);
    const figure = merged.latency["GET /agents"]?.["2xx"];
    expect(figure?.percentiles).toEqual(one.percentiles);
    expect(figure?.distribution.filter((d) => d.percentile < 100)).toEqual(one.distribution.filter((d) => d.percentile < 100));
    expect([figure?.count, figure?.meanMs, figure?.minMs]).toEqual([one.count, one.meanMs, one.minMs]);
    // the encoding keeps counts per bucket, not the exact largest sample: the max is its bucket's, within HDR's 3 digits
    expect(Math.abs((figure?.maxMs ?? 0) - one.maxMs) / one.maxMs).toBeLessThan(0.001);
    expect(merged.capacity?.intervals[0]?.endpoints["GET /agents"]).toEqual({
      count: one.count,
      p50: one.percentiles.p50,
      p99: one.percentiles.p99,
    });
    // counters add; a finding seen in every shard is one finding with the counts added
    expect(merged.conformance.responses).toBe(10_000);
    expect(merged.capacity?.counts.admitted).toBe(10_000);
    expect(merged.capacity?.settings).toMatchObject({ tenants: 6, keys: 24, shards: 3 });
    expect(merged.failures.map((f) => f.count)).toEqual([6]);
    expect(merged.status).toBe("failed");
    expect(merged.generator.note).toBe("shard 2");
    expect(merged.mergeable).toBeUndefined();
  });

  test("floods short of their intent across the shards make the merge inconclusive, as in one process: never a pass", () => {
    const noisy = (index: number, flood?: FloodOutcome): ScenarioReport => {
      const report = shard(index, [1000, 2000, 3000]);
      const tally = new CapacityTally();
      tally.tenant(`acct_${index}`).latency.recordValue(2000);
      for (const phase of ["calm", "refusal-storm"] as const) {
        tally.phase(phase).latency.recordValue(2000);
        tally.phase(phase).sent = 1;
      }
      if (flood) tally.floods.push(flood);
      return {
        ...report,
        failures: [],
        mergeable: {
          ...report.mergeable!,
          tally: tally.toJSON(),
          settings: { ...SETTINGS, profile: "noisy-neighbour", flooder: "acct_0" },
        },
      };
    };
    const storm: FloodOutcome = {
      shape: "refusal-storm",
      intended: 1500,
      achieved: 1450,
      unit: "req/s",
      refusedPerSecond: 1400,
      seconds: 1,
      sent: 1450,
    };
    // every shard passed on its own figures; the flooder's shard holds the flood
    expect(mergeReports([noisy(0, storm), noisy(1)]).status).toBe("passed");
    const short = mergeReports([noisy(0, { ...storm, achieved: 500 }), noisy(1)]);
    expect(short.status).toBe("inconclusive");
    expect(short.message).toContain(FLOOD_SHORT);
  });

  test("the report page charts a capacity run's p99 per interval and lists its worst tenants", () => {
    const merged = mergeReports([shard(0, [1000, 2000]), shard(1, [3000]), shard(2, [4000])]);
    const html = loadSection({ target: { windowSeconds: 2, messageTimeoutSeconds: 30 }, scenarios: [merged], thresholds: [] });
    expect(html).toContain("capacity: admitted p99 per endpoint, every 1 s");
    expect(html).toMatch(/<polyline[^>]+points="[0-9., ]+"/);
    expect(html).toContain("worst p99: acct_2 p99 4.00 ms");
  });
});
