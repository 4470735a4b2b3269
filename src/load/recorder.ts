import { monitorEventLoopDelay } from "node:perf_hooks";
import type * as hdr from "hdr-histogram-js";
import type { Violation } from "../checks/define.js";
import type { Exchange, RateHeaders } from "../client/index.js";
import type { ClauseId } from "../contract/index.js";
import { evidenceOf, findingKey, type Observation, observationMessage } from "../report/findings.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { LatencyBlocks } from "./blocks.js";
import type { CapacityFigures, CapacitySettings, CapacityTally } from "./capacity/tally.js";
import { formatMs, newHistogram } from "./histogram.js";
import { type LoadRequest, labelOfUrl } from "./requests.js";

export { formatMs, newHistogram };

/** Record `ms` into a histogram kept in µs. */
export function recordMs(h: hdr.Histogram, ms: number): void {
  h.recordValue(Math.max(1, Math.round(ms * 1000)));
}

const PERCENTILES = [50, 90, 95, 99, 99.9] as const;

/** Under this many answers a p99 is about the largest of them: the reports say so. */
export const FEW_ANSWERS = 100;

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
  // HDR answers a bucket's highest equivalent value: kept within what was recorded, so a p99 never reads above the max
  const at = (p: number) => ms(Math.min(h.maxValue, Math.max(h.minNonZeroValue, h.getValueAtPercentile(p))));
  const percentiles: Record<string, number> = {};
  for (const p of PERCENTILES) percentiles[`p${p}`] = h.totalCount ? at(p) : 0;
  const distribution: HistogramSummary["distribution"] = [];
  if (h.totalCount)
    for (const p of [0, 10, 25, 50, 75, 90, 95, 97.5, 99, 99.5, 99.9, 99.95, 99.99, 100])
      distribution.push({ percentile: p, ms: at(p) });
  return {
    count: h.totalCount,
    minMs: h.totalCount ? ms(h.minNonZeroValue) : 0,
    meanMs: h.totalCount ? ms(h.mean) : 0,
    maxMs: h.totalCount ? ms(h.maxValue) : 0,
    percentiles,
    distribution,
  };
}

/**
 * What kind of answer a latency figure rests on. A rate-limited answer (429) costs the target
 * little and comes back at once, so mixed with the admitted ones it would pull every percentile
 * down: latency is kept, reported and judged per endpoint and per outcome.
 */
export const OUTCOMES = ["2xx", "429", "other"] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const OUTCOME_LABEL: Record<Outcome, string> = {
  "2xx": "2xx admitted",
  "429": "429 refused",
  other: "other statuses",
};

export function outcomeOf(status: number): Outcome {
  return status >= 200 && status < 300 ? "2xx" : status === 429 ? "429" : "other";
}

/** One endpoint's latency, one summary per outcome seen. */
export type LatencyByOutcome = Partial<Record<Outcome, HistogramSummary>>;

/** One answer the generator received, as the scenarios and the checks read it. */
export interface LoadResponse {
  method: string;
  url: string;
  /** the endpoint label as every report writes it (`GET /agents/{agentId}`: src/report endpointLabel) */
  endpoint: string;
  status: number;
  /** lowercased names */
  headers: Record<string, string>;
  bodyText: string;
  json: unknown;
  /** `error.code` of the body, when it has one (the client's errorCodeOf) */
  code: string | undefined;
  /** the rate headers as the client parses them (parseRateHeaders) */
  rate: RateHeaders | undefined;
  requestId: string | undefined;
  /** the X-Request-Id the request was sent with, when the harness gave it one (PROFILE §1: echoed) */
  sentRequestId?: string;
  /** the request shape autocannon sent (a burst mixes several) */
  request?: LoadRequest;
  /** harness clock, ms */
  receivedAt: number;
  /** from the request's write to the answer's last byte */
  latencyMs: number;
}

/**
 * A scenario's own assertion that failed: the clause it broke in the checks' terms, how often,
 * and one offending answer's X-Request-Id. What the response-level checks find in the same
 * answers is an Observation (src/report/findings.ts), as in every suite.
 */
export interface ScenarioFailure extends Violation {
  count: number;
  requestId?: string;
}

/** A failure as the terminal and a failed check print it: the report's words, then how often and where. */
export const failureLine = (f: ScenarioFailure) =>
  `${observationMessage(f)}${f.count > 1 ? ` (×${f.count})` : ""}${f.requestId ? ` (X-Request-Id ${f.requestId})` : ""}`;

/** Above these the generator, not the target, may be what bounds the figures. */
const SATURATION = { eventLoopLagP99Ms: 100, cpuShare: 0.9 };
/**
 * autocannon's answers are all checked up to this many per endpoint; beyond it one in
 * SAMPLE_EVERY. Per endpoint, not per scenario: checking every answer slows the generator (and
 * an embedded target in the same process), and all of a scenario's first 5,000 went to the
 * first endpoint of the throughput profile, inflating its latency (GET 2xx p50 8.6 ms, List 0.9).
 */
const CHECK_ALL_UP_TO = 1_000;
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
 * timings, what the response-level checks found (ScenarioContext runs them, as client layers),
 * and how busy the generator itself was.
 */
export class LoadRecorder {
  readonly startedAt = Date.now();
  /** endpoint label → outcome → histogram (µs) */
  readonly latency = new Map<string, Map<Outcome, hdr.Histogram>>();
  /** the same answers in time blocks: `load compare` resamples them whole (src/load/blocks.ts) */
  readonly blocks = new LatencyBlocks();
  /** second since start → status → count */
  readonly statusPerSecond = new Map<number, Map<number, number>>();
  readonly streams = {
    ttfb: newHistogram(),
    firstDelta: newHistogram(),
    gap: newHistogram(),
    total: newHistogram(),
    ended: { done: 0, error: 0, neither: 0 },
    /** streams asked for and not yet ended, now */
    open: 0,
    /** the most streams open at once so far */
    openPeak: 0,
  };
  readonly transportErrors = new Map<string, number>();
  /** an open-model scenario's planned arrival rate (capacity): the progress line sets what was sent against it */
  plannedPerSecond?: number;
  /** a capacity run's own figures (src/load/capacity), in load.json beside the others */
  capacity?: CapacityFigures;
  /** a capacity run's tally while it runs: live per-tenant figures (--out prometheus-rw) */
  tally?: CapacityTally;
  /** a shard of a capacity run: its tally, encoded into load.json for `load merge` (src/load/shard.ts) */
  capacityTally?: { tally: CapacityTally; settings: CapacitySettings };
  private readonly failed = new Map<string, ScenarioFailure>();
  /** the response-level findings as verify's reporter takes them (one per finding key, with evidence) */
  private readonly observed = new Map<string, Observation>();
  private responses = 0;
  /** the generator's answers so far, per endpoint label */
  private readonly generated = new Map<string, number>();
  private checked = 0;
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });
  private readonly cpuStart = process.cpuUsage();

  constructor(
    private readonly target: HarnessTarget,
    readonly scenario: string,
  ) {
    this.loopDelay.enable();
  }

  /**
   * Record one answer: its status in the timeline and, unless it came in a warm-up
   * (`measured` false), its latency per endpoint and outcome.
   */
  observe(res: LoadResponse, measured = true): void {
    this.responses++;
    this.countStatus(res.status, res.receivedAt);
    if (!measured) return;
    let byOutcome = this.latency.get(res.endpoint);
    if (!byOutcome) {
      byOutcome = new Map();
      this.latency.set(res.endpoint, byOutcome);
    }
    const outcome = outcomeOf(res.status);
    let h = byOutcome.get(outcome);
    if (!h) {
      h = newHistogram();
      byOutcome.set(outcome, h);
    }
    const us = Math.max(1, Math.round(res.latencyMs * 1000));
    h.recordValue(us);
    this.blocks.record(res.endpoint, outcome, res.receivedAt - this.startedAt, us);
  }

  /**
   * Should this answer of the generator (autocannon) go through the response checks? Every one
   * up to CHECK_ALL_UP_TO per endpoint, then one in SAMPLE_EVERY: at thousands a second the
   * checks would otherwise bound the generator. Every 5xx is checked (PROFILE §3: a defect
   * wherever it comes), and the harness's own requests always are.
   */
  sampled(res: Pick<LoadResponse, "endpoint" | "status">): boolean {
    const n = (this.generated.get(res.endpoint) ?? 0) + 1;
    this.generated.set(res.endpoint, n);
    return n <= CHECK_ALL_UP_TO || n % SAMPLE_EVERY === 0 || res.status >= 500;
  }

  /** One exchange went through the response checks; `found` is what they found in it (PROFILE clauses). */
  judged(ex: Exchange, found: readonly Violation[]): void {
    this.checked++;
    for (const v of found) {
      const key = findingKey(v);
      const seen = this.observed.get(key);
      if (seen) seen.count++;
      else
        this.observed.set(key, {
          ...v,
          endpoint: labelOfUrl(this.target.baseUrl, ex.request.method, ex.request.url),
          count: 1,
          evidence: evidenceOf(ex),
        });
    }
  }

  /** The response-level findings as observations, for verify's findings (src/report/findings.ts). */
  get observations(): Observation[] {
    return [...this.observed.values()];
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

  /** A stream asked for: open (in the gauge) until it ends, however it ends. */
  async streaming<T>(stream: Promise<T>): Promise<T> {
    const s = this.streams;
    s.open++;
    s.openPeak = Math.max(s.openPeak, s.open);
    try {
      return await stream;
    } finally {
      s.open--;
    }
  }

  transportError(message: string, count = 1): void {
    this.transportErrors.set(message, (this.transportErrors.get(message) ?? 0) + count);
  }

  /** The latency figures as load.json holds them: endpoint → outcome → summary, outcomes in OUTCOMES order. */
  latencySummary(): Record<string, LatencyByOutcome> {
    const out: Record<string, LatencyByOutcome> = {};
    for (const [endpoint, byOutcome] of this.latency) {
      const row: LatencyByOutcome = {};
      for (const outcome of OUTCOMES) {
        const h = byOutcome.get(outcome);
        if (h) row[outcome] = summarizeHistogram(h);
      }
      out[endpoint] = row;
    }
    return out;
  }

  /**
   * A broken clause: one failure per defect, keyed as verify keys findings (check, clause and
   * the expectation with its numbers and ids set aside), with how often it happened.
   */
  fail(clause: ClauseId, check: string, expected: string, received: string, requestId?: string): void {
    const id = findingKey({ check, clause, expected });
    const known = this.failed.get(id);
    if (known) known.count++;
    else this.failed.set(id, { clause, check, expected, received, count: 1, ...(requestId ? { requestId } : {}) });
  }

  /** Assert inside a scenario: a false condition is a finding. */
  expect(ok: boolean, clause: ClauseId, check: string, expected: string, received: () => string, requestId?: string): boolean {
    if (!ok) this.fail(clause, check, expected, received(), requestId);
    return ok;
  }

  get failures(): ScenarioFailure[] {
    return [...this.failed.values()];
  }

  /** The share of answers the response-level checks saw, and how they were chosen. */
  get conformance() {
    return {
      responses: this.responses,
      checked: this.checked,
      share: this.responses ? Math.min(1, this.checked / this.responses) : 1,
      sampling:
        Math.max(0, ...this.generated.values()) > CHECK_ALL_UP_TO
          ? `the harness's own requests all; the generator's: all of the first ${CHECK_ALL_UP_TO} per endpoint, then 1 in ${SAMPLE_EVERY}`
          : "every response",
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
    const shared = this.target.kind === "embedded" && !this.target.ownProcess ? " (the embedded target shares this process)" : "";
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
