/** One load scenario run: driven against the target, judged, and its report (ScenarioReport). */
import type { ClauseId } from "../contract/index.js";
import { type Observation, observationMessage } from "../report/findings.js";
import type { HarnessTarget } from "../target/harness-target.js";
import type { EncodedBlocks } from "./blocks.js";
import type { CapacityFigures } from "./capacity/tally.js";
import type { RemainingTally } from "./concurrency-checks.js";
import { InconclusiveError, ScenarioContext } from "./context.js";
import { behindHttpProxy, type LoadOptions, type Scenario } from "./define.js";
import {
  FEW_ANSWERS,
  failureLine,
  formatMs,
  type GeneratorHealth,
  type HistogramSummary,
  type LatencyByOutcome,
  LoadRecorder,
  OUTCOMES,
  type ScenarioFailure,
  summarizeHistogram,
} from "./recorder.js";
import { encodedLatency, type MergeableFigures, mergeableOf } from "./shard/encode.js";

/** One scenario's outcome and figures: what `load.json` holds per scenario. */
export interface ScenarioReport {
  id: string;
  title: string;
  clauses: ClauseId[];
  /** inconclusive: the measurement could not be held (InconclusiveError), never a finding, never a pass */
  status: "passed" | "failed" | "error" | "inconclusive" | "skipped";
  /** why it was skipped or could not judge */
  message?: string;
  durationMs: number;
  /** the scenario's own assertions that failed */
  failures: ScenarioFailure[];
  /** what the response-level checks found in its answers, with evidence, as verify's findings take them */
  observations: Observation[];
  /**
   * per endpoint label, per outcome (2xx admitted, 429 refused, other): a 429 is answered at
   * once, so the admitted work's latency is never mixed with the refusals'
   */
  latency: Record<string, LatencyByOutcome>;
  /** what the latency figures hold besides the target's work (intended waits, pipelining) */
  latencyNote: string;
  /** whether latency thresholds may judge these figures (false where they hold intended waits) */
  latencyJudged: boolean;
  /** the run's latency profile: when it ran, the thresholds judge it alone (Scenario.latency.profile) */
  latencyProfile?: true;
  /** its charts lead the load report (Scenario.chartsFirst) */
  chartsFirst?: true;
  /** one row per second since the scenario started: status → count */
  statusPerSecond: Array<{ second: number; statuses: Record<string, number> }>;
  streams?: {
    ttfb: HistogramSummary;
    firstDelta: HistogramSummary;
    gap: HistogramSummary;
    total: HistogramSummary;
    ended: { done: number; error: number; neither: number };
    /** the most streams open at once (a merge of shards has none: their peaks need not coincide) */
    openPeak?: number;
  };
  conformance: { responses: number; checked: number; share: number; sampling: string };
  /** PROFILE §7 X-RateLimit-Remaining under concurrency: the answers it could judge (a scenario with none has none) */
  remaining?: RemainingTally;
  transportErrors: Record<string, number>;
  /** answers per second over the scenario */
  rps: number;
  /** 5xx answers and transport errors (each failed request); a 429 is an outcome, never an error */
  errors: number;
  generator: GeneratorHealth;
  /** the latency histograms themselves (HDR, µs, encoded): `load compare` tests a change against their noise */
  histograms?: MergeableFigures["latency"];
  /** the same histograms in consecutive time blocks: `load compare` resamples whole blocks (src/load/blocks.ts) */
  blocks?: EncodedBlocks;
  /** capacity: tenants, intervals, the worst tenants, the generator's headroom, noisy-neighbour's comparison */
  capacity?: CapacityFigures;
  /** a shard's histograms and tally, encoded: what `load merge` adds up (src/load/shard) */
  mergeable?: MergeableFigures;
}

/** Why `scenario` cannot run against `target` (the flag or setting that would let it), or undefined: a run and a dry run ask here. */
export function whyUnavailable(scenario: Scenario, target: HarnessTarget, options: LoadOptions = {}): string | undefined {
  return scenario.unavailable?.(target, options) ?? (scenario.rawSockets ? behindHttpProxy(target) : undefined);
}

/** Run one scenario against the target; never throws for the target's sake (a verdict is in the report). */
export async function runScenario(
  target: HarnessTarget,
  scenario: Scenario,
  signal: AbortSignal = new AbortController().signal,
  options: LoadOptions = {},
): Promise<ScenarioReport> {
  const started = Date.now();
  const recorder = new LoadRecorder(target, scenario.id);
  options.onRecorder?.(recorder);
  const base = {
    id: scenario.id,
    title: scenario.title,
    clauses: scenario.clauses,
    latencyNote: scenario.latency.note,
    latencyJudged: scenario.latency.judged,
    ...(scenario.latency.profile ? { latencyProfile: true as const } : {}),
    ...(scenario.chartsFirst ? { chartsFirst: true as const } : {}),
  };
  const unavailable = whyUnavailable(scenario, target, options);
  if (unavailable) return { ...base, ...emptyFigures(recorder), status: "skipped", message: unavailable, durationMs: 0 };
  const ctx = new ScenarioContext(target, recorder, signal, options);
  let status: ScenarioReport["status"] = "passed";
  let message: string | undefined;
  try {
    await scenario.run(ctx);
  } catch (err) {
    // The verdict taxonomy of src/report/verdict.ts. An InconclusiveError is the service's answers
    // leaving nothing to judge (a window turned in every burst, streams ended first, too many 429s
    // to judge a history): inconclusive, as verify's Inconclusive. A ScenarioSetupError is the
    // harness not getting to the measurement at all (a target that refuses a plain create, no
    // X-RateLimit-Reset to wait on, a wait longer than two windows): the setup the scenario needs
    // is a plain request of the profile, and not being able to make it is a harness / setup error,
    // not a verdict on the clause the scenario measures (a broken clause is still one, below).
    // Anything else is the harness's own error.
    status = err instanceof InconclusiveError ? "inconclusive" : "error";
    message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  } finally {
    await ctx.cleanup().catch(() => {});
  }
  const figures = emptyFigures(recorder);
  // a broken clause is a verdict, even where the scenario could not finish
  if (figures.failures.length || figures.observations.length) status = "failed";
  return {
    ...base,
    ...figures,
    status,
    ...(message ? { message } : {}),
    ...(ctx.remaining?.answers ? { remaining: ctx.remaining } : {}),
    durationMs: Date.now() - started,
  };
}

function emptyFigures(recorder: LoadRecorder) {
  const latency = recorder.latencySummary();
  const statusPerSecond = [...recorder.statusPerSecond]
    .sort(([a], [b]) => a - b)
    .map(([second, row]) => ({ second, statuses: Object.fromEntries([...row].map(([s, n]) => [String(s), n])) }));
  const s = recorder.streams;
  const streams =
    s.ttfb.totalCount > 0
      ? {
          ttfb: summarizeHistogram(s.ttfb),
          firstDelta: summarizeHistogram(s.firstDelta),
          gap: summarizeHistogram(s.gap),
          total: summarizeHistogram(s.total),
          ended: { ...s.ended },
          openPeak: s.openPeak,
        }
      : undefined;
  const transportErrors = Object.fromEntries(recorder.transportErrors);
  const responses = recorder.conformance.responses;
  const fiveXx = statusPerSecond.reduce(
    (n, row) => n + Object.entries(row.statuses).reduce((m, [st, c]) => m + (Number(st) >= 500 ? c : 0), 0),
    0,
  );
  const seconds = Math.max(0.001, (Date.now() - recorder.startedAt) / 1000);
  return {
    failures: recorder.failures,
    observations: recorder.observations,
    latency,
    ...(recorder.latency.size ? { histograms: encodedLatency(recorder), blocks: recorder.blocks.toJSON() } : {}),
    statusPerSecond,
    ...(streams ? { streams } : {}),
    conformance: recorder.conformance,
    transportErrors,
    rps: Math.round((responses / seconds) * 10) / 10,
    errors: fiveXx + Object.values(transportErrors).reduce((n, c) => n + c, 0),
    generator: recorder.generatorHealth(),
    ...(recorder.capacity ? { capacity: recorder.capacity } : {}),
    ...(recorder.capacityTally ? { mergeable: mergeableOf(recorder, recorder.capacityTally) } : {}),
  };
}

/**
 * The CLI's latency lines of one scenario: per endpoint, p50 / p99 per outcome with the number
 * of answers each rests on, after a line saying what the figures hold besides the target's work;
 * then the stream timings, when the scenario streamed (the figures to read where a message's
 * latency is its whole stream).
 */
export function formatLatency(r: Pick<ScenarioReport, "latency" | "latencyNote" | "streams">): string[] {
  const endpoints = Object.entries(r.latency);
  if (!endpoints.length) return [];
  const s = r.streams;
  const timing = (name: string, h: HistogramSummary) =>
    `${name} ${formatMs(h.percentiles.p50 ?? 0)} / ${formatMs(h.percentiles.p99 ?? 0)} (${h.count})`;
  const streams = s
    ? [
        `streams p50 / p99 ms (count): ${[
          timing("TTFB", s.ttfb),
          timing("first delta", s.firstDelta),
          timing("gap", s.gap),
          timing("total", s.total),
        ].join(" · ")}; ended ${s.ended.done} done, ${s.ended.error} error, ${s.ended.neither} neither`,
      ]
    : [];
  const width = Math.max(...endpoints.map(([e]) => e.length));
  const few = endpoints.some(([, byOutcome]) => OUTCOMES.some((o) => (byOutcome[o]?.count ?? FEW_ANSWERS) < FEW_ANSWERS));
  return [
    `latency p50 / p99 ms per outcome (answers) — ${r.latencyNote}`,
    ...endpoints.map(
      ([endpoint, byOutcome]) =>
        `  ${endpoint.padEnd(width)}  ${OUTCOMES.flatMap((o) => {
          const h = byOutcome[o];
          const few = h && h.count < FEW_ANSWERS ? "*" : "";
          return h ? [`${o} ${formatMs(h.percentiles.p50 ?? 0)} / ${formatMs(h.percentiles.p99 ?? 0)} (${h.count}${few})`] : [];
        }).join(" · ")}`,
    ),
    ...(few ? [`  * fewer than ${FEW_ANSWERS} answers: the p99 is about their maximum`] : []),
    ...streams,
  ];
}

/**
 * Each clause a scenario saw broken, one line each in the report's words: its own failures,
 * then what the response-level checks found in its answers (with how often).
 */
export function brokenClauses(r: Pick<ScenarioReport, "failures" | "observations">): string[] {
  return [
    ...r.failures.map(failureLine),
    ...r.observations.map((o) => `${observationMessage(o)}${o.count > 1 ? ` (×${o.count})` : ""}`),
  ];
}
