import { formatMs, type LatencyByOutcome, OUTCOME_LABEL, OUTCOMES, type Outcome } from "./recorder.js";
import type { ScenarioReport } from "./scenario-run.js";

/**
 * Pass/fail thresholds in k6's spirit: `p99<250` (ms, every endpoint, admitted answers),
 * `p50<=20`, `max<1000`, `p99[429]<50` (the refusals), `errors<0.1%` (transport errors and 5xx
 * among all answers), `rps>100` (answers per second).
 */
export interface Threshold {
  source: string;
  metric: (typeof METRICS)[number];
  /** the answers a latency metric judges: 2xx (admitted) unless the threshold names another */
  outcome: Outcome;
  op: (typeof OPS)[number];
  value: number;
}

const METRICS = ["p50", "p90", "p95", "p99", "p99.9", "max", "mean", "errors", "rps"] as const;
const OPS = ["<", "<=", ">", ">="] as const;

const PATTERN =
  /^\s*(p50|p90|p95|p99|p99\.9|max|mean|errors|rps)(?:\[([^\]]*)\])?\s*(<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)?)\s*(%|ms)?\s*$/;

/** Parse one `--threshold`; a reason when it is not one. */
export function parseThreshold(source: string): Threshold | string {
  const m = PATTERN.exec(source);
  const metric = METRICS.find((name) => name === m?.[1]);
  const op = OPS.find((name) => name === m?.[3]);
  if (!m || !metric || !op)
    return `--threshold "${source}": expected METRIC[OUTCOME] OP VALUE, e.g. p99<250, p99[429]<50 or errors<0.1% (metrics: ${METRICS.join(" ")}; outcomes: ${OUTCOMES.join(" ")})`;
  const [, , selector, , raw, unit] = m;
  const outcome = selector === undefined ? "2xx" : OUTCOMES.find((o) => o === selector);
  if (!outcome) return `--threshold "${source}": the outcome in [] is one of ${OUTCOMES.join(", ")}`;
  if ((metric === "errors" || metric === "rps") && selector !== undefined)
    return `--threshold "${source}": ${metric} is over every answer and takes no [outcome]`;
  if (metric === "errors" && unit !== "%") return `--threshold "${source}": errors is a share, e.g. errors<0.1%`;
  if (metric !== "errors" && unit === "%") return `--threshold "${source}": only errors takes a %`;
  const value = Number(raw) / (unit === "%" ? 100 : 1);
  return { source, metric, outcome, op, value };
}

export interface ThresholdInput {
  /** the scenarios whose latency figures the latency thresholds judge: endpoint label → outcome → ms */
  latency: Array<{ scenario: string; endpoints: Record<string, LatencyByOutcome> }>;
  responses: number;
  errors: number;
  durationSeconds: number;
}

export interface ThresholdResult {
  source: string;
  passed: boolean;
  /**
   * false when the run had nothing to judge it on (no answer of its outcome): no verdict, neither
   * a pass (nothing was measured) nor the service's failure (a conformant service may give no
   * such answer: a 5xx, say)
   */
  judged: boolean;
  /** what was measured, e.g. `throughput GET /agents/{agentId} p99 12.3 ms over 900 2xx admitted answers` */
  observed: string;
}

/** ✓ held, ✗ broken, ? nothing to judge it on */
export const thresholdMark = (t: Pick<ThresholdResult, "passed" | "judged">): string => (!t.judged ? "?" : t.passed ? "✓" : "✗");

const holds = (op: Threshold["op"], a: number, b: number) =>
  op === "<" ? a < b : op === "<=" ? a <= b : op === ">" ? a > b : a >= b;

/**
 * What the thresholds judge in a run: latency from the throughput profile when it ran (the
 * other scenarios' latencies hold bursts and waits); without it, from every scenario whose
 * figures hold no intended wait. Errors and answers per second over every scenario.
 */
export function thresholdInputOf(reports: readonly ScenarioReport[]): ThresholdInput {
  const ran = reports.filter((r) => r.status !== "skipped");
  const profile = ran.filter((r) => r.latencyProfile);
  const judged = profile.length ? profile : ran.filter((r) => r.latencyJudged);
  return {
    latency: judged.map((r) => ({ scenario: r.id, endpoints: r.latency })),
    responses: reports.reduce((n, r) => n + r.conformance.responses, 0),
    errors: reports.reduce((n, r) => n + r.errors, 0),
    durationSeconds: reports.reduce((n, r) => n + r.durationMs / 1000, 0),
  };
}

/**
 * Latency thresholds hold for every endpoint of every judged scenario, on the answers of their
 * outcome (2xx unless named: a 429 is answered at once and would flatter every percentile); one
 * with no such answer to judge has no verdict (`judged: false`). Errors and rps hold for the run as a whole.
 */
export function evaluateThreshold(t: Threshold, input: ThresholdInput): ThresholdResult {
  if (t.metric === "errors") {
    const share = input.responses ? input.errors / input.responses : 0;
    return {
      source: t.source,
      passed: holds(t.op, share, t.value),
      // no answer at all: nothing measured, neither held nor broken
      judged: input.responses > 0,
      observed: `errors ${(share * 100).toFixed(3)}% of ${input.responses} answers (5xx and transport errors; a 429 is an outcome, not an error)`,
    };
  }
  if (t.metric === "rps") {
    const rps = input.responses / Math.max(0.001, input.durationSeconds);
    return {
      source: t.source,
      passed: holds(t.op, rps, t.value),
      judged: input.responses > 0,
      observed: `${rps.toFixed(1)} answers/s`,
    };
  }
  const figures = input.latency.flatMap(({ scenario, endpoints }) =>
    Object.entries(endpoints).flatMap(([endpoint, byOutcome]) => {
      const h = byOutcome[t.outcome];
      if (!h?.count) return [];
      const ms = t.metric === "max" ? h.maxMs : t.metric === "mean" ? h.meanMs : (h.percentiles[t.metric] ?? 0);
      return [{ where: `${scenario} ${endpoint}`, ms, count: h.count }];
    }),
  );
  const answers = `${OUTCOME_LABEL[t.outcome]} answers`;
  if (!figures.length)
    return {
      source: t.source,
      passed: false,
      judged: false,
      observed: `no ${answers} to judge in ${input.latency.map((l) => l.scenario).join(", ") || "any scenario that ran"}`,
    };
  const said = (f: (typeof figures)[number]) => `${f.where} ${t.metric} ${formatMs(f.ms)} ms over ${f.count} ${answers}`;
  const broken = figures.filter((f) => !holds(t.op, f.ms, t.value));
  if (broken.length) return { source: t.source, passed: false, judged: true, observed: broken.map(said).join("; ") };
  const worst = figures.reduce((a, b) => (b.ms > a.ms === (t.op === "<" || t.op === "<=") ? b : a));
  return {
    source: t.source,
    passed: true,
    judged: true,
    observed: `${figures.length} endpoint figure(s) within it; the closest: ${said(worst)}`,
  };
}
