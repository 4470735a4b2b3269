import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { expect, test } from "vitest";
import { exampleTenants } from "../../src/load/capacity/plan.js";
import { METRICS } from "../../src/load/live/remote-write.js";
import type { LoadRun } from "../../src/load/run-of-scenarios.js";
import { load } from "./verify-run.js";

/**
 * `load --out prometheus-rw=URL` against a real Prometheus (Debian's), started here on 127.0.0.1
 * with its remote-write receiver on: the series queried back with PromQL agree with load.json —
 * answers by endpoint and outcome exactly, quantiles within the histogram's precision.
 */
const PROMETHEUS = ["/usr/bin/prometheus", "/usr/sbin/prometheus"].find((p) => existsSync(p));
const missing = PROMETHEUS ? undefined : "prometheus is not installed (apt-get install -y prometheus; .ci/run installs it)";
if (missing && process.env.CI === "true") throw new Error(missing);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (typeof address !== "object" || !address) throw new Error("no port");
  return address.port;
}

/** Prometheus in a folder of its own, ready once it says so on its log (at most 60 s). */
async function startPrometheus(binary: string) {
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-prometheus-"));
  writeFileSync(join(dir, "prometheus.yml"), "global:\n  scrape_interval: 1m\n");
  const port = await freePort();
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--web.enable-remote-write-receiver",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let log = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`prometheus not ready in 60 s:\n${log}`)), 60_000);
    child.stderr.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes("Server is ready to receive web requests")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`prometheus exited ${code}:\n${log}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    writeUrl: `${base}/api/v1/write`,
    query: async (promql: string) => {
      const res = await request(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.body.json()) as {
        data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
      };
      return body.data.result;
    },
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

test.skipIf(missing !== undefined)(
  `the series Prometheus received agree with load.json${missing ? ` (skipped: ${missing})` : ""}`,
  { timeout: 300_000 },
  async () => {
    const prometheus = await startPrometheus(PROMETHEUS!);
    try {
      const dir = mkdtempSync(join(tmpdir(), "agent-harness-live-"));
      const keysFile = join(dir, "tenants.json");
      writeFileSync(keysFile, JSON.stringify(exampleTenants(10, 2, 12)));
      const run = await load([
        "--scenario",
        "capacity",
        "--keys-file",
        keysFile,
        "--duration",
        "10s",
        "--out",
        `prometheus-rw=${prometheus.writeUrl}`,
      ]);
      expect(run.code, run.output.slice(-2000)).toBe(0);
      expect(run.output).not.toMatch(/--out prometheus-rw:/);
      const loadRun = JSON.parse(readFileSync(join(run.runDir, "load.json"), "utf8")) as LoadRun;
      const report = loadRun.scenarios[0]!;
      const selector = `run_id="${loadRun.runId}",scenario="capacity"`;

      const counts = await prometheus.query(`${METRICS.requests}{${selector}}`);
      const received = Object.fromEntries(counts.map((r) => [`${r.metric.endpoint} ${r.metric.outcome}`, Number(r.value[1])]));
      const expected: Record<string, number> = {};
      for (const [endpoint, byOutcome] of Object.entries(report.latency))
        for (const [outcome, h] of Object.entries(byOutcome)) if (h?.count) expected[`${endpoint} ${outcome}`] = h.count;
      expect(received).toEqual(expected);

      const p99 = await prometheus.query(`${METRICS.latency}{${selector},outcome="2xx",quantile="0.99"}`);
      expect(p99.length).toBeGreaterThan(0);
      for (const r of p99) {
        const recorded = report.latency[r.metric.endpoint!]?.["2xx"]?.percentiles.p99 ?? Number.NaN;
        // HDR keeps three significant digits: the two readings of one bucket differ by under 0.1%, and a
        // report's p99 is kept at most at the recorded maximum
        expect(Math.abs(Number(r.value[1]) - recorded) / recorded).toBeLessThan(0.002);
      }

      // streams: time to first byte as load.json has it, none left open at the end, the most at once
      const ttfb = await prometheus.query(`${METRICS.ttfb}{${selector},quantile="0.99"}`);
      const recordedTtfb = report.streams?.ttfb.percentiles.p99 ?? Number.NaN;
      expect(ttfb).toHaveLength(1);
      expect(Math.abs(Number(ttfb[0]!.value[1]) - recordedTtfb) / recordedTtfb).toBeLessThan(0.002);
      const one = async (promql: string) => Number((await prometheus.query(promql))[0]?.value[1] ?? Number.NaN);
      expect(await one(`${METRICS.streamsOpen}{${selector}}`)).toBe(0);
      expect(await one(`${METRICS.streamsOpenPeak}{${selector}}`)).toBe(report.streams?.openPeak);
      expect(report.streams?.openPeak).toBeGreaterThan(0);

      // per tenant (label tenant): the rows load.json keeps, exactly, and the admitted over all tenants
      const capacity = report.capacity!;
      const tenants = await prometheus.query(`${METRICS.tenantRequests}{${selector}}`);
      const byTenant = (tenant: string, outcome: string) =>
        Number(tenants.find((r) => r.metric.tenant === tenant && r.metric.outcome === outcome)?.value[1] ?? Number.NaN);
      for (const row of [...capacity.worstTenants, ...capacity.mostRefused])
        expect({
          tenant: row.account,
          admitted: byTenant(row.account, "admitted"),
          refused: byTenant(row.account, "refused"),
        }).toEqual({
          tenant: row.account,
          admitted: row.admitted,
          refused: row.refused,
        });
      expect(await one(`sum(${METRICS.tenantRequests}{${selector},outcome="admitted"})`)).toBe(capacity.counts.admitted);
      const worst = capacity.worstTenants[0]!;
      const tenantP99 = await one(`${METRICS.tenantLatency}{${selector},tenant="${worst.account}",quantile="0.99"}`);
      expect(Math.abs(tenantP99 - worst.p99Ms) / worst.p99Ms).toBeLessThan(0.002);
    } finally {
      await prometheus.stop();
    }
  },
);
