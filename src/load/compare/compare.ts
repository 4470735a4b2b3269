import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import * as hdr from "hdr-histogram-js";
import { mulberry32 } from "../../arbitraries/mulberry32.js";
import { decodeBlock } from "../blocks.js";
import { decodeHistogram } from "../capacity/tally.js";
import { OUTCOMES, type Outcome } from "../recorder.js";
import type { LoadRun } from "../run-of-scenarios.js";
import type { ScenarioReport } from "../scenario-run.js";

/**
 * `load compare BASE CURRENT`: is this build slower than the last one? Per scenario, endpoint
 * and outcome, the quantiles of both runs side by side, and whether a change is beyond the
 * noise of the runs' own samples: a bootstrap interval on the quantile's change, resampled
 * from the recorded HDR histograms (seeded, so a comparison is repeatable).
 */

/** The figures a gate may name: latency quantiles of the 2xx answers, throughput, the error rate. */
export const GATE_FIGURES = ["p50", "p90", "p95", "p99", "rps", "errors"] as const;
export type GateFigure = (typeof GATE_FIGURES)[number];
const QUANTILES = { p50: 50, p90: 90, p95: 95, p99: 99 } as const;
type Quantile = keyof typeof QUANTILES;
const isQuantile = (f: GateFigure): f is Quantile => f in QUANTILES;

/** `--max-regression 'p99:+10%'`: how much worse a figure may get (latency up, rps down, errors up in points). */
export interface Gate {
  source: string;
  figure: GateFigure;
  /** relative (0.1 for 10%) unless `absoluteMs` */
  relative?: number;
  absoluteMs?: number;
}

export function parseGate(source: string): Gate | string {
  const m = /^\s*(p50|p90|p95|p99|rps|errors)\s*:\s*([+-])?\s*([0-9]+(?:\.[0-9]+)?)\s*(%|ms)\s*$/.exec(source);
  const figure = GATE_FIGURES.find((f) => f === m?.[1]);
  if (!m || !figure)
    return `--max-regression "${source}": expected FIGURE:+N% or FIGURE:+Nms, e.g. p99:+10%, p95:+20ms, rps:-10%, errors:+0.5% (figures: ${GATE_FIGURES.join(" ")})`;
  const [, , sign, raw, unit] = m;
  if (figure === "rps" && sign === "+") return `--max-regression "${source}": throughput regresses downwards: rps:-N%`;
  if (figure !== "rps" && sign === "-") return `--max-regression "${source}": ${figure} regresses upwards: ${figure}:+N${unit}`;
  if (unit === "ms" && !isQuantile(figure)) return `--max-regression "${source}": only a latency quantile takes ms`;
  const n = Number(raw);
  return unit === "ms" ? { source, figure, absoluteMs: n } : { source, figure, relative: n / 100 };
}

/** A run's load.json: a run folder, a folder holding one, or the file itself. */
export function readLoadRun(path: string): LoadRun | string {
  if (!existsSync(path)) return `${path}: no such file or folder`;
  const file = statSync(path).isDirectory() ? join(path, "load.json") : path;
  if (!existsSync(file)) return `${path}: no load.json in it (give a run's report folder or its load.json)`;
  try {
    const run = JSON.parse(readFileSync(file, "utf8")) as LoadRun;
    if (!Array.isArray(run.scenarios) || !run.target) return `${file}: not a load.json (no scenarios, no target)`;
    const unread = run.scenarios.findIndex((s) => !readable(s));
    if (unread >= 0)
      return `${file}: not a load.json this version reads (scenario ${unread + 1} lacks its id, status, duration, answers or the generator's lag)`;
    return run;
  } catch (err) {
    return `${file}: not JSON (${err instanceof Error ? err.message : String(err)})`;
  }
}

/** The fields a comparison reads of a scenario: a skipped one has only its id and status. */
function readable(s: unknown): boolean {
  const r = s as Partial<ScenarioReport> | null;
  if (typeof r?.id !== "string" || typeof r.status !== "string") return false;
  return (
    r.status === "skipped" ||
    (typeof r.durationMs === "number" &&
      typeof r.conformance?.responses === "number" &&
      typeof r.generator?.eventLoopLagP99Ms === "number" &&
      Number.isFinite(r.generator.eventLoopLagP99Ms))
  );
}

/** Why two runs cannot be compared (other scenarios, other target settings), or undefined. */
export function notComparable(base: LoadRun, current: LoadRun): string | undefined {
  const ran = (run: LoadRun) =>
    run.scenarios
      .filter((s) => s.status !== "skipped")
      .map((s) => s.id)
      .sort()
      .join(", ");
  if (ran(base) !== ran(current))
    return `the runs drove other scenarios: BASE ${ran(base) || "none"}, CURRENT ${ran(current) || "none"}`;
  if (!ran(base)) return "no scenario ran in either run: nothing to compare";
  // the network between generator and service (--network-delay, --network-proxy) moves every figure
  for (const key of ["kind", "windowSeconds", "messageTimeoutSeconds", "network"] as const)
    if ((base.target[key] ?? "none") !== (current.target[key] ?? "none"))
      return `the targets had other settings: ${key} ${base.target[key] ?? "none"} in BASE, ${current.target[key] ?? "none"} in CURRENT`;
  for (const s of base.scenarios) {
    const other = current.scenarios.find((c) => c.id === s.id);
    // what a capacity drive offers: its tenants and their tiers (the keys file), its shape, one
    // shard of it or all of it (a merge of shards compares as the one-process run of the same drive)
    const settings = (r: ScenarioReport | undefined) => {
      const c = r?.capacity?.settings;
      if (!c) return "";
      const { share, profile, durationSeconds, rampSeconds, tenants, keys, flooder, shard } = c;
      return JSON.stringify({ share, profile, durationSeconds, rampSeconds, tenants, keys, flooder, shard });
    };
    if (settings(s) !== settings(other))
      return `scenario ${s.id} ran with other settings: ${settings(s)} in BASE, ${settings(other)} in CURRENT`;
    // the offered rate, within 1 %: a merge adds its shards' rates, each rounded
    const [offered, otherOffered] = [s.capacity?.settings.offeredPerSecond, other?.capacity?.settings.offeredPerSecond];
    if (
      offered !== undefined &&
      otherOffered !== undefined &&
      Math.abs(offered - otherOffered) > 0.01 * Math.max(offered, otherOffered)
    )
      return `scenario ${s.id} offered another rate: ${offered} req/s in BASE, ${otherOffered} in CURRENT (another keys file's tiers)`;
  }
  return undefined;
}

/** One figure of one endpoint and outcome in both runs. */
export interface FigureChange {
  scenario: string;
  endpoint: string;
  outcome: Outcome;
  figure: Quantile;
  baseMs: number;
  currentMs: number;
  /** the 95% bootstrap interval of current − base, ms: the wider of the answers' and the time blocks' */
  intervalMs: [number, number];
  /** both runs kept time blocks, and whole blocks were resampled too */
  blockResampled?: true;
  /**
   * both runs hold enough answers, and enough above the quantile, for the resamples to say
   * anything of its noise (MIN_ANSWERS, MIN_TAIL); a figure that is not is shown, never judged
   */
  judgeable: boolean;
  /** judgeable, and the interval excludes no change: the runs' own noise does not explain it */
  beyondNoise: boolean;
  counts: { base: number; current: number };
}

export interface ScenarioChange {
  scenario: string;
  /**
   * How much busier CURRENT's machine was than BASE's (1 when not busier), from the generator's
   * event-loop lag each run recorded: its calibration, measured beside the figures it explains.
   */
  machine: { baseLagP99Ms: number; currentLagP99Ms: number; factor: number };
  rps: { base: number; current: number };
  errors: { base: number; current: number; baseRate: number; currentRate: number; beyondNoise: boolean };
  latency: FigureChange[];
  /** endpoints and outcomes answered in one run only: nothing to compare, and said so */
  oneSided: { endpoint: string; outcome: Outcome; counts: { base: number; current: number } }[];
}

/** The values a histogram holds, as (value µs, count) steps in ascending order. */
function stepsOf(h: hdr.Histogram): { values: number[]; cumulative: number[] } {
  if (!(h instanceof hdr.JsHistogram)) throw new Error("load compare needs the JavaScript HDR histograms");
  const values: number[] = [];
  const cumulative: number[] = [];
  const it = h.recordedValuesIterator;
  it.reset();
  let total = 0;
  while (it.hasNext()) {
    const step = it.next();
    total += step.countAtValueIteratedTo;
    values.push(step.valueIteratedTo);
    cumulative.push(total);
  }
  return { values, cumulative };
}

/** The q-th percentile of a sample given as counts per step. */
function quantileOfCounts(values: readonly number[], counts: readonly number[], n: number, q: number): number {
  const rank = Math.max(1, Math.ceil((q / 100) * n));
  let seen = 0;
  for (let i = 0; i < values.length; i++) {
    seen += counts[i]!;
    if (seen >= rank) return values[i]!;
  }
  return values[values.length - 1] ?? 0;
}

/** Bootstrap resamples of a histogram's quantiles (µs): each resample draws n values with replacement. */
function resampledQuantiles(h: hdr.Histogram, quantiles: readonly number[], resamples: number, random: () => number) {
  const { values, cumulative } = stepsOf(h);
  const n = cumulative[cumulative.length - 1] ?? 0;
  const out = quantiles.map(() => new Float64Array(resamples));
  // n draws per resample, at most 5,000: past that the interval comes out wider than it is (never narrower), in bounded time
  const draws = Math.min(n, 5_000);
  const counts = new Array<number>(values.length);
  for (let r = 0; r < resamples; r++) {
    counts.fill(0);
    for (let d = 0; d < draws; d++) {
      const target = Math.floor(random() * n) + 1;
      let lo = 0;
      let hi = cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid]! >= target) hi = mid;
        else lo = mid + 1;
      }
      counts[lo]! += 1;
    }
    quantiles.forEach((q, i) => {
      out[i]![r] = quantileOfCounts(values, counts, draws, q);
    });
  }
  return out;
}

/** Under this many answers on either side a resample only repeats them: no change is called beyond noise. */
export const MIN_ANSWERS = 20;

/**
 * Under this many answers above a quantile on either side, its resamples only shuffle the few
 * largest answers (the p99 of 39 answers is the largest one) and their interval is far narrower
 * than the quantile's real noise: two runs of one build then differ "beyond noise" by chance.
 * So a quantile is judged only with at least this many answers beyond it: p99 from 500 answers,
 * p95 from 100, p90 from 50.
 */
export const MIN_TAIL = 5;

/** The fewest answers a run needs for its q-th percentile to be judged: MIN_ANSWERS, and MIN_TAIL above it. */
export const fewestAnswers = (q: number): number => Math.max(MIN_ANSWERS, Math.ceil((MIN_TAIL * 100) / (100 - q)));

/** Enough answers on both sides to judge the q-th percentile's change. */
export const judgeable = (q: number, ...counts: number[]) => counts.every((n) => n >= fewestAnswers(q));

/** The bootstrap resamples per figure: a 95% interval leaves out the lowest and the highest 2.5% of their changes. */
const RESAMPLES = 200;

/** Under this many blocks holding answers a block resample says little: the answers' own bootstrap stands alone. */
export const MIN_BLOCKS = 5;

/**
 * Block bootstrap resamples of the quantiles (µs): each resample draws as many whole time blocks
 * as the run had, with replacement, and reads the quantiles of their union. A slow stretch stays
 * one draw, so it is in some resamples and out of others: the interval holds what a busy second
 * of the machine does to the figure, which resampling answers one by one averages away.
 */
function blockResampledQuantiles(
  encoded: readonly string[],
  quantiles: readonly number[],
  resamples: number,
  random: () => number,
): Float64Array[] | undefined {
  const blocks = encoded.filter((e) => e !== "").map((e) => stepsOf(decodeBlock(e)));
  if (blocks.length < MIN_BLOCKS) return undefined;
  const values = [...new Set(blocks.flatMap((b) => b.values))].sort((x, y) => x - y);
  // each block's cumulative count at every value of the union, so a resample's rank is a binary search
  const cumulative = blocks.map((b) => {
    const row = new Float64Array(values.length);
    let j = -1;
    values.forEach((v, i) => {
      while (j + 1 < b.values.length && b.values[j + 1]! <= v) j++;
      row[i] = j < 0 ? 0 : b.cumulative[j]!;
    });
    return row;
  });
  const out = quantiles.map(() => new Float64Array(resamples));
  const last = values.length - 1;
  const chosen = new Array<Float64Array>(blocks.length);
  const countAt = (i: number) => chosen.reduce((n, row) => n + row[i]!, 0);
  for (let r = 0; r < resamples; r++) {
    for (let d = 0; d < blocks.length; d++) chosen[d] = cumulative[Math.floor(random() * blocks.length)]!;
    const n = countAt(last);
    quantiles.forEach((q, k) => {
      const rank = Math.max(1, Math.ceil((q / 100) * n));
      let [lo, hi] = [0, last];
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (countAt(mid) >= rank) hi = mid;
        else lo = mid + 1;
      }
      out[k]![r] = values[lo]!;
    });
  }
  return out;
}

/** The 95% interval of current − base (ms) from two sets of resampled quantiles (µs). */
function intervalOf(base: Float64Array, current: Float64Array): [number, number] {
  const diffs = Array.from(current, (v, r) => (v - base[r]!) / 1000).sort((x, y) => x - y);
  return [diffs[Math.floor(0.025 * diffs.length)]!, diffs[Math.ceil(0.975 * diffs.length) - 1]!];
}

function latencyChanges(scenario: string, base: ScenarioReport, current: ScenarioReport, seed: number): FigureChange[] {
  const baseHist = histogramsOf(base);
  const currentHist = histogramsOf(current);
  const changes: FigureChange[] = [];
  const figures = Object.keys(QUANTILES) as Quantile[];
  for (const endpoint of Object.keys(baseHist).sort()) {
    for (const outcome of OUTCOMES) {
      const a = baseHist[endpoint]?.[outcome];
      const b = currentHist[endpoint]?.[outcome];
      if (a === undefined || b === undefined) continue;
      const [ha, hb] = [decodeHistogram(a), decodeHistogram(b)];
      if (!ha.totalCount || !hb.totalCount) continue;
      const random = mulberry32(seed);
      const qs = figures.map((f) => QUANTILES[f]);
      const ra = resampledQuantiles(ha, qs, RESAMPLES, random);
      const rb = resampledQuantiles(hb, qs, RESAMPLES, random);
      // whole blocks too, when both runs kept them: the wider of the two intervals is the noise
      const blocksOf = (r: ScenarioReport) => r.blocks?.latency[endpoint]?.[outcome] ?? [];
      const ba = blockResampledQuantiles(blocksOf(base), qs, RESAMPLES, random);
      const bb = ba && blockResampledQuantiles(blocksOf(current), qs, RESAMPLES, random);
      figures.forEach((figure, i) => {
        const answers = intervalOf(ra[i]!, rb[i]!);
        const blocks = bb ? intervalOf(ba[i]!, bb[i]!) : answers;
        const interval: [number, number] = [Math.min(answers[0], blocks[0]), Math.max(answers[1], blocks[1])];
        const judged = judgeable(QUANTILES[figure], ha.totalCount, hb.totalCount);
        changes.push({
          scenario,
          endpoint,
          outcome,
          figure,
          baseMs: ha.getValueAtPercentile(QUANTILES[figure]) / 1000,
          currentMs: hb.getValueAtPercentile(QUANTILES[figure]) / 1000,
          intervalMs: interval,
          ...(bb ? { blockResampled: true } : {}),
          judgeable: judged,
          beyondNoise: judged && (interval[0] > 0 || interval[1] < 0),
          counts: { base: ha.totalCount, current: hb.totalCount },
        });
      });
    }
  }
  return changes;
}

/** A run's latency histograms per endpoint and outcome: its own, or a merged sharded run's. */
const histogramsOf = (r: ScenarioReport) => r.histograms ?? r.mergeable?.latency ?? {};

/** The endpoints and outcomes with answers in one run and none in the other. */
function oneSidedOf(base: ScenarioReport, current: ScenarioReport): ScenarioChange["oneSided"] {
  const countOf = (r: ScenarioReport, endpoint: string, outcome: Outcome) => {
    const h = histogramsOf(r)[endpoint]?.[outcome];
    return h === undefined ? 0 : decodeHistogram(h).totalCount;
  };
  const endpoints = new Set([...Object.keys(histogramsOf(base)), ...Object.keys(histogramsOf(current))]);
  return [...endpoints].sort().flatMap((endpoint) =>
    OUTCOMES.flatMap((outcome) => {
      const counts = { base: countOf(base, endpoint, outcome), current: countOf(current, endpoint, outcome) };
      return (counts.base === 0) !== (counts.current === 0) ? [{ endpoint, outcome, counts }] : [];
    }),
  );
}

/** Answers of a scenario: every response, with the transport errors. */
const answersOf = (r: ScenarioReport) => r.conformance.responses + Object.values(r.transportErrors).reduce((n, c) => n + c, 0);

/** Two error rates differ beyond chance: a two-proportion z-test at 95%. */
function ratesDiffer(errorsA: number, nA: number, errorsB: number, nB: number): boolean {
  if (!nA || !nB) return false;
  const pooled = (errorsA + errorsB) / (nA + nB);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / nA + 1 / nB));
  return se > 0 && Math.abs(errorsB / nB - errorsA / nA) / se > 1.96;
}

/**
 * A quiet machine's event-loop lag p99 is a few ms; it is added to both lags so that a move from 2
 * to 4 ms reads as the nothing it is, not as a machine twice as busy.
 */
const QUIET_LAG_MS = 10;

/**
 * The machine's share of a change between runs. Every step of an answer — the generator's timers
 * and reads and, on loopback or embedded, the target's own work — waits for a CPU; the event-loop
 * lag is how long a ready step waited, measured all through the run. When CURRENT's lag was ×f
 * BASE's, latency up to ×f is what the busier machine explains: between-run variance that
 * resampling one run's answers cannot see.
 */
function machineOf(base: ScenarioReport, current: ScenarioReport): ScenarioChange["machine"] {
  const [b, c] = [base.generator.eventLoopLagP99Ms, current.generator.eventLoopLagP99Ms];
  return { baseLagP99Ms: b, currentLagP99Ms: c, factor: Math.max(1, (c + QUIET_LAG_MS) / (b + QUIET_LAG_MS)) };
}

/**
 * The scenarios both runs drove whose own verdict was not a pass in one of them: a failed,
 * errored or inconclusive run's figures are no reference and no candidate (its own report says
 * why), so a release gate gives no verdict on them rather than pass them.
 */
export function unfitScenarios(base: LoadRun, current: LoadRun): { scenario: string; line: string }[] {
  const out: { scenario: string; line: string }[] = [];
  for (const b of base.scenarios) {
    const c = current.scenarios.find((s) => s.id === b.id);
    if (!c || b.status === "skipped") continue;
    for (const [name, r] of [
      ["BASE", b],
      ["CURRENT", c],
    ] as const)
      if (r.status !== "passed")
        out.push({ scenario: r.id, line: `${name}'s ${r.id} ${r.status}${r.message ? ` (${r.message.split("\n")[0]})` : ""}` });
  }
  return out;
}

/**
 * Answers a second over the scenario's run, unrounded: the report's rps keeps one decimal, which
 * makes 0.3 → 0.2 a third less at a low rate.
 */
const rpsOf = (r: ScenarioReport) => (r.durationMs > 0 ? r.conformance.responses / (r.durationMs / 1000) : r.rps);

export function compareRuns(base: LoadRun, current: LoadRun, seed = 1): ScenarioChange[] {
  const out: ScenarioChange[] = [];
  for (const b of base.scenarios) {
    const c = current.scenarios.find((s) => s.id === b.id);
    if (!c || b.status === "skipped") continue;
    const [nB, nC] = [answersOf(b), answersOf(c)];
    out.push({
      scenario: b.id,
      machine: machineOf(b, c),
      rps: { base: rpsOf(b), current: rpsOf(c) },
      errors: {
        base: b.errors,
        current: c.errors,
        baseRate: nB ? b.errors / nB : 0,
        currentRate: nC ? c.errors / nC : 0,
        beyondNoise: ratesDiffer(b.errors, nB, c.errors, nC),
      },
      latency: latencyChanges(b.id, b, c, seed),
      oneSided: oneSidedOf(b, c),
    });
  }
  return out;
}

/** A gate that broke: what, where, by how much. */
export interface Regression {
  gate: string;
  message: string;
}

/**
 * The gates judged: a latency gate on the 2xx answers of every endpoint of a scenario whose
 * latency is judged (one holding intended waits is shown, never judged), broken when the whole
 * 95% interval of the change lies past the tolerance and what a busier machine explains — worse
 * beyond the tolerance, the noise of the samples and that of the machine. rps has no noise model
 * from one run each: the tolerance alone judges it.
 */
export function regressions(
  changes: readonly ScenarioChange[],
  gates: readonly Gate[],
  judged: ReadonlySet<string>,
): Regression[] {
  const out: Regression[] = [];
  for (const gate of gates)
    for (const s of changes) {
      const { figure } = gate;
      if (isQuantile(figure)) {
        if (!judged.has(s.scenario)) continue;
        for (const f of s.latency.filter((x) => x.figure === figure && x.outcome === "2xx")) {
          const allowed = (gate.absoluteMs ?? (gate.relative ?? 0) * f.baseMs) + (s.machine.factor - 1) * f.baseMs;
          const busier = s.machine.factor > 1.05 ? ` and the busier machine's ×${s.machine.factor.toFixed(2)}` : "";
          if (f.beyondNoise && f.intervalMs[0] > allowed)
            out.push({
              gate: gate.source,
              message: `${s.scenario} ${f.endpoint} ${figure} ${fmt(f.baseMs)} → ${fmt(f.currentMs)} ms (+${fmt(f.currentMs - f.baseMs)} ms, 95% interval of the change +${fmt(f.intervalMs[0])}…+${fmt(f.intervalMs[1])} ms) beyond ${gate.source}${busier}`,
            });
        }
      } else if (figure === "rps") {
        // a scenario holding intended waits (a bucket's window, a stream's budget) has the rate of its waits
        if (!judged.has(s.scenario)) continue;
        const drop = s.rps.base > 0 ? (s.rps.base - s.rps.current) / s.rps.base : 0;
        if (drop > (gate.relative ?? 0))
          out.push({
            gate: gate.source,
            message: `${s.scenario} rps ${rate(s.rps.base)} → ${rate(s.rps.current)} (−${pct(drop)}) beyond ${gate.source}`,
          });
      } else {
        const rise = s.errors.currentRate - s.errors.baseRate;
        if (s.errors.beyondNoise && rise > (gate.relative ?? 0))
          out.push({
            gate: gate.source,
            message: `${s.scenario} errors ${pct(s.errors.baseRate)} → ${pct(s.errors.currentRate)} beyond ${gate.source}`,
          });
      }
    }
  return out;
}

/** A latency gate the runs could not judge on some of its endpoints, and why. */
export interface UnjudgedGate {
  gate: string;
  /** the gate's quantile: 99 for p99 */
  percentile: number;
  /** "scenario endpoint n=BASE/CURRENT" of each endpoint the figure was not judged on */
  endpoints: string[];
  /** the endpoints the gate applies to */
  of: number;
}

/**
 * The latency gates left unjudged on some or all of their endpoints: too few answers to judge the
 * quantile there (MIN_ANSWERS, MIN_TAIL). A gate judged on none is no verdict at all, which a
 * release gate must say rather than pass.
 */
export function unjudgedGates(
  changes: readonly ScenarioChange[],
  gates: readonly Gate[],
  judged: ReadonlySet<string>,
): UnjudgedGate[] {
  const out: UnjudgedGate[] = [];
  for (const gate of gates) {
    // throughput is judged where latency is: with no such scenario the gate judged nothing
    if (gate.figure === "rps" && !changes.some((s) => judged.has(s.scenario)))
      out.push({ gate: gate.source, percentile: 0, endpoints: [], of: 0 });
    if (!isQuantile(gate.figure)) continue;
    const scenarios = changes.filter((s) => judged.has(s.scenario));
    const figures = scenarios.flatMap((s) => s.latency.filter((f) => f.figure === gate.figure && f.outcome === "2xx"));
    // an endpoint answered 2xx in one run only is one the gate could not judge either
    const oneSided = scenarios.flatMap((s) =>
      s.oneSided.filter((o) => o.outcome === "2xx").map((o) => ({ scenario: s.scenario, ...o })),
    );
    const left = [...figures.filter((f) => !f.judgeable), ...oneSided];
    if (left.length || !figures.length)
      out.push({
        gate: gate.source,
        percentile: QUANTILES[gate.figure],
        endpoints: left.map((f) => `${f.scenario} ${f.endpoint} n=${f.counts.base}/${f.counts.current}`),
        of: figures.length + oneSided.length,
      });
  }
  return out;
}

/**
 * The comparison's verdict, in one line, and its exit code: 1 when a gate broke beyond its
 * tolerance and the noise (judged on the scenarios that passed in both runs); else 2 when a
 * scenario did not pass in one of the runs (`unfitScenarios`) or a gate was judged nowhere; else 0.
 */
export function compareVerdict(
  broken: readonly Regression[],
  unjudged: readonly UnjudgedGate[],
  unfit: readonly { line: string }[],
  gates: number,
): { line: string; code: 0 | 1 | 2 } {
  if (broken.length) return { line: `${broken.length} regression(s) beyond tolerance and noise`, code: 1 };
  const nowhere = unjudged.filter((u) => u.endpoints.length === u.of).map((u) => u.gate);
  const why = [
    ...unfit.map((u) => u.line.split(" (")[0]),
    ...(nowhere.length ? [`${nowhere.join(", ")} judged on no endpoint`] : []),
  ];
  if (why.length) return { line: `no verdict: ${why.join("; ")}`, code: 2 };
  return { line: gates ? "no regression beyond tolerance and noise" : "no --max-regression given: nothing judged", code: 0 };
}

/** What a gate left unjudged means, in one line. */
export function unjudgedLine(u: UnjudgedGate): string {
  const q = u.percentile;
  const fewest = fewestAnswers(q);
  if (!u.of) return `${u.gate}: judged nowhere: no scenario of these runs has latency or throughput a gate judges`;
  const why = `fewer than ${fewest} answers in a run, the fewest a p${q} is judged from`;
  return u.endpoints.length === u.of
    ? `${u.gate}: judged nowhere: every endpoint had ${why} (${u.endpoints.join(", ")}); drive longer or gate on a lower quantile`
    : `${u.gate}: not judged on ${u.endpoints.length} of ${u.of} endpoints, ${why}: ${u.endpoints.join(", ")}`;
}

const fmt = (ms: number) => (Math.abs(ms) >= 100 ? ms.toFixed(0) : Math.abs(ms) >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const pct = (share: number) => `${(share * 100).toFixed(2)}%`;
const rate = (perSecond: number) => (perSecond >= 10 ? perSecond.toFixed(0) : perSecond.toFixed(2));

/** The table a terminal shows: one line per scenario, endpoint and outcome. */
export function compareLines(changes: readonly ScenarioChange[]): string[] {
  const lines: string[] = [];
  for (const s of changes) {
    const errorNote = s.errors.beyondNoise ? " (beyond noise)" : "";
    lines.push(
      `${s.scenario}: rps ${rate(s.rps.base)} → ${rate(s.rps.current)}; errors ${pct(s.errors.baseRate)} → ${pct(s.errors.currentRate)}${errorNote}`,
      `  machine: event-loop lag p99 ${fmt(s.machine.baseLagP99Ms)} → ${fmt(s.machine.currentLagP99Ms)} ms${s.machine.factor > 1.05 ? ` (CURRENT's busier: latency up to ×${s.machine.factor.toFixed(2)} is the machine's, not a regression)` : ""}`,
    );
    const rows = new Map<string, FigureChange[]>();
    for (const f of s.latency) rows.set(`${f.endpoint} [${f.outcome}]`, [...(rows.get(`${f.endpoint} [${f.outcome}]`) ?? []), f]);
    for (const [row, figures] of rows) {
      const cells = figures.map((f) => {
        const change = f.baseMs > 0 ? ((f.currentMs - f.baseMs) / f.baseMs) * 100 : 0;
        return `${f.figure} ${fmt(f.baseMs)} → ${fmt(f.currentMs)} ms (${change >= 0 ? "+" : ""}${change.toFixed(0)}%${f.beyondNoise ? ", beyond noise" : f.judgeable ? "" : ", too few answers to judge"})`;
      });
      lines.push(`  ${row} n=${figures[0]!.counts.base}/${figures[0]!.counts.current}: ${cells.join("; ")}`);
    }
    for (const o of s.oneSided)
      lines.push(`  ${o.endpoint} [${o.outcome}] n=${o.counts.base}/${o.counts.current}: answered in one run only, not compared`);
  }
  return lines;
}
