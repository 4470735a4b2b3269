import { monitorEventLoopDelay } from "node:perf_hooks";
import * as hdr from "hdr-histogram-js";
import type { ObservedExchange, Violation } from "../checks/define.js";
import { formatViolation, runChecks } from "../checks/run.js";
import { type ClauseId, matchEndpoint } from "../contract/index.js";
import type { HarnessTarget } from "../target/harness-target.js";

/** HDR histograms in microseconds, 1 µs to 10 min, 3 significant digits (autocannon's own settings). */
export function newHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
}

export const PERCENTILES = [50, 90, 95, 99, 99.9] as const;

/** A histogram as JSON: percentiles in ms, and the distribution for the HDR chart. */
export interface HistogramSummary {
  count: number;
  minMs: number;
  meanMs: number;
  maxMs: number;
  /** "p50" … "p99.9" → ms */
  percentiles: Record<string, number>;
  /** the HDR percentile distribution: percentile → ms, for the chart */
  distribution: Array<{ percentile: number; ms: number }>;
}

export function summarizeHistogram(h: hdr.Histogram): HistogramSummary {
  const ms = (us: number) => Math.round(us) / 1000;
  const percentiles: Record<string, number> = {};
  for (const p of PERCENTILES) percentiles[`p${p}`] = h.totalCount ? ms(h.getValueAtPercentile(p)) : 0;
  const distribution: HistogramSummary["distribution"] = [];
  if (h.totalCount)
    for (const p of [0, 10, 25, 50, 75, 90, 95, 97.5, 99, 99.5, 99.9, 99.95, 99.99, 100])
      distribution.push({ percentile: p, ms: ms(h.getValueAtPercentile(p)) });
  return {
    count: h.totalCount,
    minMs: h.totalCount ? ms(h.minNonZeroValue) : 0,
    meanMs: h.totalCount ? ms(h.mean) : 0,
    maxMs: h.totalCount ? ms(h.maxValue) : 0,
    percentiles,
    distribution,
  };
}

/** One answer the generator received, as the scenarios and the checks read it. */
export interface LoadResponse {
  method: string;
  url: string;
  /** the endpoint label (`GET /agents/:agentId`), or the path when it matches none */
  endpoint: string;
  status: number;
  /** lowercased names */
  headers: Record<string, string>;
  bodyText: string;
  json: unknown;
  /** harness clock, ms */
  receivedAt: number;
  latencyMs: number;
}

/** A broken clause seen under load: a scenario's own assertion, or a response-level check. */
export interface Finding {
  scenario: string;
  clause: ClauseId;
  check: string;
  expected: string;
  received: string;
  occurrences: number;
  /** an X-Request-Id of one offending answer, when there is one */
  requestId?: string;
}

/** Above these the generator, not the target, may be what bounds the figures. */
const SATURATION = { eventLoopLagP99Ms: 100, cpuShare: 0.9 };
/** Every answer is checked up to this many per scenario; beyond it one in SAMPLE_EVERY. */
const CHECK_ALL_UP_TO = 5_000;
const SAMPLE_EVERY = 10;

export interface GeneratorHealth {
  eventLoopLagP99Ms: number;
  eventLoopLagMaxMs: number;
  /** CPU time of the generator's process ÷ wall time (1 = one core busy) */
  cpuShare: number;
  saturated: boolean;
  note: string;
}

/**
 * Everything one scenario observed: latency per endpoint (HDR), statuses per second, stream
 * timings, the response-level checks on every answer (or a sampled share), and how busy the
 * generator itself was.
 */
export class LoadRecorder {
  readonly startedAt = Date.now();
  readonly latency = new Map<string, hdr.Histogram>();
  /** second since start → status → count */
  readonly statusPerSecond = new Map<number, Map<number, number>>();
  readonly streams = {
    ttfb: newHistogram(),
    firstDelta: newHistogram(),
    gap: newHistogram(),
    total: newHistogram(),
    ended: { done: 0, error: 0, neither: 0 },
  };
  readonly transportErrors = new Map<string, number>();
  private readonly findings = new Map<string, Finding>();
  private responses = 0;
  private checked = 0;
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });
  private readonly cpuStart = process.cpuUsage();
  private readonly keys: string[];

  constructor(
    private readonly target: HarnessTarget,
    readonly scenario: string,
  ) {
    this.keys = Object.values(target.keys).filter((k): k is string => typeof k === "string");
    this.loopDelay.enable();
  }

  /** Record one answer: its latency and status, and (all or sampled) the response-level checks. */
  observe(res: LoadResponse, authenticated = true): void {
    this.responses++;
    let h = this.latency.get(res.endpoint);
    if (!h) {
      h = newHistogram();
      this.latency.set(res.endpoint, h);
    }
    h.recordValue(Math.max(1, Math.round(res.latencyMs * 1000)));
    this.countStatus(res.status, res.receivedAt);
    if (this.responses > CHECK_ALL_UP_TO && this.responses % SAMPLE_EVERY !== 0) return;
    this.checked++;
    this.checkExchange(
      {
        request: { method: res.method, url: res.url, headers: {} },
        response: { status: res.status, headers: res.headers, bodyText: res.bodyText, json: res.json },
      },
      res.receivedAt,
      authenticated,
      res.receivedAt - res.latencyMs,
    );
  }

  /** The response-level checks of `verify` (src/checks) on one exchange. */
  checkExchange(ex: ObservedExchange, receivedAt: number, authenticated = true, sentAt?: number): void {
    const violations = runChecks(ex, {
      endpoint: matchEndpoint(ex.request.method, ex.request.url, { baseUrl: this.target.baseUrl })?.spec,
      authenticated,
      keys: this.keys,
      tokens: [],
      windowSeconds: this.target.windowSeconds,
      receivedAt,
      ...(sentAt !== undefined ? { sentAt } : {}),
      clockSkewSeconds: this.target.kind === "external" ? 2 : 0,
    });
    const requestId = ex.response.headers["x-request-id"];
    for (const v of violations) this.addViolation(v, typeof requestId === "string" ? requestId : undefined);
  }

  countStatus(status: number, at: number): void {
    const second = Math.max(0, Math.floor((at - this.startedAt) / 1000));
    let row = this.statusPerSecond.get(second);
    if (!row) {
      row = new Map();
      this.statusPerSecond.set(second, row);
    }
    row.set(status, (row.get(status) ?? 0) + 1);
  }

  transportError(message: string): void {
    this.transportErrors.set(message, (this.transportErrors.get(message) ?? 0) + 1);
  }

  private addViolation(v: Violation, requestId?: string): void {
    this.fail(v.clause, v.check, v.expected, v.received, requestId);
  }

  /** A broken clause: counted once per (check, expectation), with how often it happened. */
  fail(clause: ClauseId, check: string, expected: string, received: string, requestId?: string): void {
    const id = `${check}|${clause}|${expected}`;
    const known = this.findings.get(id);
    if (known) known.occurrences++;
    else
      this.findings.set(id, {
        scenario: this.scenario,
        clause,
        check,
        expected,
        received,
        occurrences: 1,
        ...(requestId ? { requestId } : {}),
      });
  }

  /** Assert inside a scenario: a false condition is a finding. */
  expect(ok: boolean, clause: ClauseId, check: string, expected: string, received: () => string, requestId?: string): boolean {
    if (!ok) this.fail(clause, check, expected, received(), requestId);
    return ok;
  }

  get findingList(): Finding[] {
    return [...this.findings.values()];
  }

  /** The share of answers the response-level checks saw. */
  get conformance() {
    return {
      responses: this.responses,
      checked: this.checked,
      share: this.responses ? this.checked / this.responses : 1,
      sampling:
        this.responses > CHECK_ALL_UP_TO ? `all of the first ${CHECK_ALL_UP_TO}, then 1 in ${SAMPLE_EVERY}` : "every response",
    };
  }

  /** Stop watching the generator; how busy it was. */
  generatorHealth(): GeneratorHealth {
    this.loopDelay.disable();
    const cpu = process.cpuUsage(this.cpuStart);
    const wallMs = Math.max(1, Date.now() - this.startedAt);
    const cpuShare = (cpu.user + cpu.system) / 1000 / wallMs;
    const p99 = this.loopDelay.count ? this.loopDelay.percentile(99) / 1e6 : 0;
    const max = this.loopDelay.count ? this.loopDelay.max / 1e6 : 0;
    const saturated = p99 > SATURATION.eventLoopLagP99Ms || cpuShare > SATURATION.cpuShare;
    const shared = this.target.kind === "embedded" ? " (the embedded target shares this process)" : "";
    return {
      eventLoopLagP99Ms: Math.round(p99 * 10) / 10,
      eventLoopLagMaxMs: Math.round(max * 10) / 10,
      cpuShare: Math.round(cpuShare * 100) / 100,
      saturated,
      note: saturated
        ? `the generator was saturated${shared} (event-loop lag p99 ${p99.toFixed(0)} ms, CPU ${(cpuShare * 100).toFixed(0)}%): the figures are bounded by the generator, not the target`
        : `the generator kept up${shared} (event-loop lag p99 ${p99.toFixed(0)} ms, CPU ${(cpuShare * 100).toFixed(0)}%)`,
    };
  }
}

export { formatViolation };

/** One line per finding, as a failed check prints it. */
export function formatFinding(f: Finding): string {
  return `[${f.clause}] ${f.check}: expected ${f.expected}; received ${f.received}${f.occurrences > 1 ? ` (×${f.occurrences})` : ""}${f.requestId ? ` (X-Request-Id ${f.requestId})` : ""}`;
}
