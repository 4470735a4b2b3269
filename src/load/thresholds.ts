/**
 * Pass/fail thresholds in k6's spirit: `p99<250` (ms, every endpoint), `p50<=20`, `max<1000`,
 * `errors<0.1%` (transport errors and 5xx among all answers), `rps>100` (answers per second).
 */
export interface Threshold {
  source: string;
  metric: (typeof METRICS)[number];
  op: (typeof OPS)[number];
  value: number;
}

const METRICS = ["p50", "p90", "p95", "p99", "p99.9", "max", "mean", "errors", "rps"] as const;
const OPS = ["<", "<=", ">", ">="] as const;

const PATTERN = /^\s*(p50|p90|p95|p99|p99\.9|max|mean|errors|rps)\s*(<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)?)\s*(%|ms)?\s*$/;

/** Parse one `--threshold`; undefined with a reason when it is not one. */
export function parseThreshold(source: string): Threshold | string {
  const m = PATTERN.exec(source);
  const metric = METRICS.find((name) => name === m?.[1]);
  const op = OPS.find((name) => name === m?.[2]);
  if (!m || !metric || !op)
    return `--threshold "${source}": expected METRIC OP VALUE, e.g. p99<250 or errors<0.1% (metrics: ${METRICS.join(" ")})`;
  const [, , , raw, unit] = m;
  if (metric === "errors" && unit !== "%") return `--threshold "${source}": errors is a share, e.g. errors<0.1%`;
  if (metric !== "errors" && unit === "%") return `--threshold "${source}": only errors takes a %`;
  const value = Number(raw) / (unit === "%" ? 100 : 1);
  return { source, metric, op, value };
}

export interface ThresholdInput {
  /** per endpoint label: percentiles in ms */
  latency: Record<string, { percentiles: Record<string, number>; maxMs: number; meanMs: number; count: number }>;
  responses: number;
  errors: number;
  durationSeconds: number;
}

export interface ThresholdResult {
  source: string;
  passed: boolean;
  /** what was measured, e.g. `GET /agents/:agentId p99 12.3 ms` */
  observed: string;
}

const holds = (op: Threshold["op"], a: number, b: number) =>
  op === "<" ? a < b : op === "<=" ? a <= b : op === ">" ? a > b : a >= b;

/** Latency thresholds hold for every endpoint; errors and rps for the run as a whole. */
export function evaluateThreshold(t: Threshold, input: ThresholdInput): ThresholdResult {
  if (t.metric === "errors") {
    const share = input.responses ? input.errors / input.responses : 0;
    return {
      source: t.source,
      passed: holds(t.op, share, t.value),
      observed: `errors ${(share * 100).toFixed(3)}% of ${input.responses}`,
    };
  }
  if (t.metric === "rps") {
    const rps = input.responses / Math.max(0.001, input.durationSeconds);
    return { source: t.source, passed: holds(t.op, rps, t.value), observed: `${rps.toFixed(1)} answers/s` };
  }
  const worst: string[] = [];
  let passed = true;
  for (const [endpoint, h] of Object.entries(input.latency)) {
    if (!h.count) continue;
    const v = t.metric === "max" ? h.maxMs : t.metric === "mean" ? h.meanMs : (h.percentiles[t.metric] ?? 0);
    if (!holds(t.op, v, t.value)) {
      passed = false;
      worst.push(`${endpoint} ${t.metric} ${v} ms`);
    }
  }
  return { source: t.source, passed, observed: passed ? `every endpoint within ${t.source}` : worst.join("; ") };
}
