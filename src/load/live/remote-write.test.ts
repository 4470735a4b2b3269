import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, vi } from "vitest";
import { CapacityTally } from "../capacity/tally.js";
import { LoadRecorder } from "../recorder.js";
import { deploymentAt } from "../test-support.js";
import { endpointForLines, METRICS, RemoteWriteMetrics, seriesOf } from "./remote-write.js";

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

/** A remote-write endpoint on loopback: `answer` decides what each push gets (or holds it). */
async function sink(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const pushes: number[] = [];
  const server = createServer((req, res) => {
    pushes.push(Date.now());
    req.resume();
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v1/write`,
    pushes,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

test("a sink that never answers: one push on its way at a time, and the end of the run waits the deadline, not the queue", async () => {
  const held = await sink(() => undefined);
  const warnings: string[] = [];
  const live = new RemoteWriteMetrics(held.url, "run-1", (line) => warnings.push(line), { everyMs: 20, closeDeadlineMs: 300 });
  live.watch(new LoadRecorder(deploymentAt("http://127.0.0.1:9/v1"), "streams"));
  await new Promise((resolve) => setTimeout(resolve, 400));
  const started = Date.now();
  expect(await live.close()).toBe(false);
  expect(Date.now() - started).toBeLessThan(1_500);
  // twenty ticks came; each found the first push still on its way
  expect(held.pushes).toHaveLength(1);
  expect(warnings).toEqual([expect.stringContaining("took over 0.3 s with the last push")]);
  await held.close();
});

test("a refusing sink is said once, naming the endpoint without its query; pushes that get through say so at the end", async () => {
  let refuse = true;
  const flaky = await sink((_req, res) => res.writeHead(refuse ? 400 : 204).end(refuse ? "out of order sample" : ""));
  const warnings: string[] = [];
  const live = new RemoteWriteMetrics(`${flaky.url}?token=s3cret`, "run-2", (line) => warnings.push(line), {
    everyMs: 10,
    closeDeadlineMs: 2_000,
  });
  live.watch(new LoadRecorder(deploymentAt("http://127.0.0.1:9/v1"), "streams"));
  await new Promise((resolve) => setTimeout(resolve, 100));
  refuse = false;
  expect(await live.close()).toBe(true);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain(`${flaky.url} answered 400: out of order sample`);
  expect(warnings[0]).not.toContain("s3cret");
  expect(flaky.pushes.length).toBeGreaterThan(2);
  await flaky.close();
});

test("the endpoint in a line keeps no user, password or query", () => {
  expect(endpointForLines("https://u:p@prom.example:9443/api/v1/write?token=x")).toBe("https://prom.example:9443/api/v1/write");
});

test("transport errors whose messages share their first 80 characters are one series, their counts summed", () => {
  const recorder = new LoadRecorder(deploymentAt("http://127.0.0.1:9/v1"), "linearizable-history");
  const start = `linearizable-history: GET http://deployment.example.internal:8443/v1/agents/`;
  recorder.transportErrors.set(`${start}agt_aaaaaaaaaaaa: other side closed`, 2);
  recorder.transportErrors.set(`${start}agt_bbbbbbbbbbbb: other side closed`, 3);
  const errors = seriesOf(recorder).filter((s) => s.labels.__name__ === METRICS.transportErrors);
  expect(errors.map((s) => s.value)).toEqual([5]);
});

test("TLS material the sink cannot read is a failed push, said once: the run goes on", async () => {
  vi.stubEnv("AGENT_HARNESS_CA_FILE", "/nonexistent/agent-harness-ca.pem");
  const warnings: string[] = [];
  const live = new RemoteWriteMetrics("https://127.0.0.1:9/api/v1/write", "run-3", (line) => warnings.push(line), {
    everyMs: 10,
    closeDeadlineMs: 2_000,
  });
  live.watch(new LoadRecorder(deploymentAt("http://127.0.0.1:9/v1"), "streams"));
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await live.close()).toBe(false);
  expect(warnings).toEqual([expect.stringContaining("--ca-file /nonexistent/agent-harness-ca.pem: cannot read it")]);
});
