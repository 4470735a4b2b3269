import protobuf from "protobufjs";
import { compress } from "snappyjs";
import { type Dispatcher, request } from "undici";
import { networkAgent } from "../../client/network.js";
import type { LoadRecorder } from "../recorder.js";
import { OUTCOMES } from "../recorder.js";

/**
 * `load --out prometheus-rw=URL`: the run's figures sent while it runs to a Prometheus
 * remote-write endpoint (protocol 1.0: a snappy-compressed protobuf WriteRequest), as k6's
 * Prometheus output does, so a tester watches them on the dashboards they already have. Every
 * series carries the run id and the scenario; counters are cumulative per scenario, so a query
 * of the last sample agrees with load.json.
 */

/** The WriteRequest of remote-write 1.0 (prometheus/prompb), only the fields a sender fills. */
const WRITE_REQUEST = protobuf.Root.fromJSON({
  nested: {
    WriteRequest: { fields: { timeseries: { rule: "repeated", type: "TimeSeries", id: 1 } } },
    TimeSeries: {
      fields: { labels: { rule: "repeated", type: "Label", id: 1 }, samples: { rule: "repeated", type: "Sample", id: 2 } },
    },
    Label: { fields: { name: { type: "string", id: 1 }, value: { type: "string", id: 2 } } },
    Sample: { fields: { value: { type: "double", id: 1 }, timestamp: { type: "int64", id: 2 } } },
  },
}).lookupType("WriteRequest");

/** The metric names, one place: docs/load.md's PromQL reads them. */
export const METRICS = {
  requests: "agent_harness_requests_total",
  latency: "agent_harness_latency_ms",
  transportErrors: "agent_harness_transport_errors_total",
  ttfb: "agent_harness_stream_ttfb_ms",
  streamsEnded: "agent_harness_streams_ended_total",
  streamsOpen: "agent_harness_streams_open",
  streamsOpenPeak: "agent_harness_streams_open_peak",
  tenantRequests: "agent_harness_tenant_requests_total",
  tenantLatency: "agent_harness_tenant_latency_ms",
} as const;

/** A capacity tenant's counts as `outcome` labels; refused_unexpectedly is a part of refused, not beside it. */
const TENANT_OUTCOMES = [
  ["admitted", "admitted"],
  ["refused", "refused"],
  ["unexpected", "refused_unexpectedly"],
  ["errors", "errors"],
] as const;

const QUANTILES = [50, 90, 95, 99] as const;

interface Series {
  labels: Record<string, string>;
  value: number;
}

/**
 * What one recorder holds now, as series: answers and latency quantiles by endpoint and outcome,
 * streams (open now, the most at once, time to first byte, how they ended), errors, and under
 * capacity the same per tenant (label `tenant`: the account).
 */
export function seriesOf(recorder: LoadRecorder): Series[] {
  const out: Series[] = [];
  for (const [endpoint, byOutcome] of recorder.latency)
    for (const outcome of OUTCOMES) {
      const h = byOutcome.get(outcome);
      if (!h?.totalCount) continue;
      // a 429's endpoint is its bucket (PROFILE §7): outcome="429" by endpoint is the refusals by bucket
      out.push({ labels: { __name__: METRICS.requests, endpoint, outcome }, value: h.totalCount });
      for (const q of QUANTILES)
        out.push({
          labels: { __name__: METRICS.latency, endpoint, outcome, quantile: String(q / 100) },
          value: h.getValueAtPercentile(q) / 1000,
        });
    }
  // the label is the message's start: messages that share it are one series (two series of one
  // label set in a push would be one sample twice, and a receiver may refuse the whole push)
  const errors = new Map<string, number>();
  for (const [message, n] of recorder.transportErrors)
    errors.set(message.slice(0, 80), (errors.get(message.slice(0, 80)) ?? 0) + n);
  for (const [error, n] of errors) out.push({ labels: { __name__: METRICS.transportErrors, error }, value: n });
  const s = recorder.streams;
  if (s.ttfb.totalCount)
    for (const q of QUANTILES)
      out.push({ labels: { __name__: METRICS.ttfb, quantile: String(q / 100) }, value: s.ttfb.getValueAtPercentile(q) / 1000 });
  for (const [how, n] of Object.entries(s.ended)) out.push({ labels: { __name__: METRICS.streamsEnded, how }, value: n });
  out.push({ labels: { __name__: METRICS.streamsOpen }, value: s.open });
  out.push({ labels: { __name__: METRICS.streamsOpenPeak }, value: s.openPeak });
  for (const [tenant, t] of recorder.tally?.tenants ?? []) {
    for (const [field, outcome] of TENANT_OUTCOMES)
      out.push({ labels: { __name__: METRICS.tenantRequests, tenant, outcome }, value: t[field] });
    if (t.latency.totalCount)
      for (const q of QUANTILES)
        out.push({
          labels: { __name__: METRICS.tenantLatency, tenant, quantile: String(q / 100) },
          value: t.latency.getValueAtPercentile(q) / 1000,
        });
  }
  return out;
}

/** The body of one push: the series with the run's labels, sorted by name as the protocol asks, at `at` ms. */
export function writeRequest(series: readonly Series[], common: Record<string, string>, at: number): Uint8Array {
  const timeseries = series.map((s) => ({
    labels: Object.entries({ ...s.labels, ...common })
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, value]) => ({ name, value })),
    samples: [{ value: s.value, timestamp: at }],
  }));
  return compress(WRITE_REQUEST.encode(WRITE_REQUEST.fromObject({ timeseries })).finish());
}

/** The endpoint as a warning names it: no user, no password, no query (a token may ride in any of them). */
export function endpointForLines(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

/** How long the end of the run waits for its last push: a sink that does not answer never holds back the verdict. */
const CLOSE_DEADLINE_MS = 10_000;

/**
 * Pushes every `everyMs` while the run lasts, and once more at its end, for each scenario it saw.
 * One push at a time: a tick that comes while a push is on its way asks for one more after it
 * (the figures then current), so a slow endpoint makes pushes rarer, never a queue that the end
 * of the run would wait out.
 */
export class RemoteWriteMetrics {
  private readonly recorders: LoadRecorder[] = [];
  private readonly timer: NodeJS.Timeout;
  // made at the first push, not here: --ca-file and the client certificate reach the environment
  // the agent reads when the target starts, after this object is made
  private dispatcher: Dispatcher | undefined;
  private warned = false;
  private lastFailed = false;
  private lastAt = 0;
  private inFlight: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly url: string,
    private readonly runId: string,
    private readonly warn: (line: string) => void,
    private readonly timing: { everyMs: number; closeDeadlineMs: number } = {
      everyMs: 5_000,
      closeDeadlineMs: CLOSE_DEADLINE_MS,
    },
  ) {
    this.timer = setInterval(() => this.push(), timing.everyMs);
    this.timer.unref();
  }

  /** A scenario's recorder, sent from now on (its last state is sent again at the end). */
  watch(recorder: LoadRecorder): void {
    this.recorders.push(recorder);
    this.push();
  }

  /** A push of every scenario's current figures: now, or right after the push on its way. */
  push(): Promise<void> {
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    this.inFlight = (async () => {
      try {
        do {
          this.again = false;
          await this.send();
        } while (this.again);
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }

  private async send(): Promise<void> {
    if (!this.recorders.length) return;
    // one timestamp a push, each after the last: two pushes in one millisecond would be one sample twice, the later refused
    const at = Math.max(Date.now(), this.lastAt + 1);
    this.lastAt = at;
    const series = this.recorders.flatMap((r) =>
      seriesOf(r).map((s) => ({ ...s, labels: { ...s.labels, scenario: r.scenario } })),
    );
    try {
      // in the try: TLS material it cannot read is a failed push, said once, never the run's end
      this.dispatcher ??= networkAgent(2);
      const res = await request(this.url, {
        method: "POST",
        dispatcher: this.dispatcher,
        headers: {
          "content-type": "application/x-protobuf",
          "content-encoding": "snappy",
          "x-prometheus-remote-write-version": "0.1.0",
        },
        body: writeRequest(series, { run_id: this.runId, job: "agent-harness" }, at),
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) this.fail(`answered ${res.statusCode}: ${text.slice(0, 200).trim()}`);
      else this.lastFailed = false;
    } catch (err) {
      this.fail(err instanceof Error ? err.message : String(err));
    }
  }

  private fail(why: string): void {
    this.lastFailed = true;
    // said once: the metrics are a view of the run, never its verdict
    if (this.warned) return;
    this.warned = true;
    this.warn(`--out prometheus-rw: ${endpointForLines(this.url)} ${why} (the run goes on; load.json keeps every figure)`);
  }

  /** The last push (waited for at most the deadline), then stop; whether that last push got through. */
  async close(): Promise<boolean> {
    clearInterval(this.timer);
    let deadline: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      this.push().then(() => true),
      new Promise<false>((resolve) => {
        deadline = setTimeout(() => resolve(false), this.timing.closeDeadlineMs);
      }),
    ]);
    clearTimeout(deadline);
    if (!ended) {
      this.lastFailed = true;
      // the push dropped below fails in its turn: this line says it all
      this.warned = true;
      this.warn(
        `--out prometheus-rw: ${endpointForLines(this.url)} took over ${this.timing.closeDeadlineMs / 1000} s with the last push; not waited for (load.json keeps every figure)`,
      );
    }
    // a push still on its way is dropped with its connection
    await (ended ? this.dispatcher?.close() : this.dispatcher?.destroy());
    return !this.lastFailed;
  }
}
