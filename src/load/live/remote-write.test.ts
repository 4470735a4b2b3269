import { expect, test } from "vitest";
import { CapacityTally } from "../capacity/tally.js";
import { LoadRecorder } from "../recorder.js";
import { deploymentAt } from "../test-support.js";
import { METRICS, seriesOf } from "./remote-write.js";

const value = (series: ReturnType<typeof seriesOf>, labels: Record<string, string>) =>
  series.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

test("open streams count while a stream is asked for and until it ends, however it ends; the peak stays", async () => {
  const recorder = new LoadRecorder(deploymentAt("http://127.0.0.1:9/v1"), "streams");
  let finish!: () => void;
  const held = recorder.streaming(new Promise<void>((r) => (finish = r)));
  const failed = recorder.streaming(Promise.reject(new Error("reset"))).catch(() => "failed");
  expect(value(seriesOf(recorder), { __name__: METRICS.streamsOpen })).toBe(2);
  expect(await failed).toBe("failed");
  finish();
  await held;
  const after = seriesOf(recorder);
  expect(value(after, { __name__: METRICS.streamsOpen })).toBe(0);
  expect(value(after, { __name__: METRICS.streamsOpenPeak })).toBe(2);
});

test("under capacity, every tenant's counts by outcome and its admitted latency", () => {
  const recorder = new LoadRecorder(deploymentAt("http://127.0.0.1:9/v1"), "capacity");
  const tally = new CapacityTally();
  recorder.tally = tally;
  const t = tally.tenant("acct_a");
  t.admitted = 3;
  t.refused = 2;
  t.unexpected = 1;
  for (const us of [1_000, 2_000, 40_000]) t.latency.recordValue(us);
  const series = seriesOf(recorder);
  const requests = (outcome: string) => value(series, { __name__: METRICS.tenantRequests, tenant: "acct_a", outcome });
  expect(["admitted", "refused", "refused_unexpectedly", "errors"].map(requests)).toEqual([3, 2, 1, 0]);
  const p99 = value(series, { __name__: METRICS.tenantLatency, tenant: "acct_a", quantile: "0.99" });
  expect(p99).toBeCloseTo(40, 1);
});
