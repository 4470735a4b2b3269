import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findingKey, type Observation, type ResultsJson } from "../../report/index.js";
import { capacityFigures, floodsShortBecause, neighboursVerdicts } from "../capacity/tally.js";
import { OUTCOMES, type ScenarioFailure, summarizeHistogram } from "../recorder.js";
import { type LoadRun, loadRunResult } from "../run-of-scenarios.js";
import type { ScenarioReport } from "../scenario-run.js";
import { SCENARIOS } from "../scenarios.js";
import { parseThreshold, type Threshold } from "../thresholds.js";
import { addEncodedLatency, addHistograms, addTallies } from "./encode.js";

/** One shard's run as its report folder holds it. */
export interface ShardRun {
  dir: string;
  results: ResultsJson;
  loadRun: LoadRun;
}

/** Why shards cannot be merged (a missing shard, a folder that holds none): exit 2. */
export class MergeError extends Error {
  override name = "MergeError";
}

/**
 * The shard runs under `dirs`: a run folder (load.json and results.json), or a folder of them
 * (a CI job's downloaded artifacts, one folder per shard), in any order.
 */
export function readShardRuns(dirs: readonly string[]): ShardRun[] {
  const runs: ShardRun[] = [];
  const read = (dir: string) => {
    const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8")) as ResultsJson;
    const loadRun = JSON.parse(readFileSync(join(dir, "load.json"), "utf8")) as LoadRun;
    runs.push({ dir, results, loadRun });
  };
  for (const dir of dirs) {
    if (!existsSync(dir)) throw new MergeError(`${dir}: no such folder`);
    const found = runFolders(dir, SEARCH_DEPTH);
    if (!found.length) throw new MergeError(`${dir}: no load.json in it or in the folders under it`);
    found.forEach(read);
  }
  return runs;
}

/** How deep under a given folder runs are looked for: an artifact folder, a report folder, a run folder. */
const SEARCH_DEPTH = 3;

/** The folders holding a load.json, `dir` itself or under it (at most `depth` levels down). */
function runFolders(dir: string, depth: number): string[] {
  if (existsSync(join(dir, "load.json"))) return [dir];
  if (depth === 0) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => runFolders(join(dir, e.name), depth - 1));
}

/**
 * One run from its shards, as one process would have reported it: each scenario's histograms
 * added (HDR adds exactly, so every percentile is that of all the samples), its counters summed,
 * its findings deduplicated with their counts added, and the verdicts that compare tenants
 * (noisy-neighbour) judged again on the merged figures. Every shard 1/n … n/n must be there once.
 */
export function mergeShardRuns(runs: readonly ShardRun[], runId: string) {
  if (!runs.length) throw new MergeError("no shard to merge");
  const shards = runs.map((r) => ({ r, shard: r.loadRun.scenarios.find((s) => s.mergeable)?.mergeable?.settings.shard }));
  const unsharded = shards.filter((s) => !s.shard).map((s) => s.r.dir);
  if (unsharded.length) throw new MergeError(`not a shard of a capacity run (load --shard x/n): ${unsharded.join(", ")}`);
  const count = shards[0]!.shard!.count;
  const indices = shards.map((s) => s.shard!.index).sort((a, b) => a - b);
  const expected = Array.from({ length: count }, (_, i) => i);
  if (shards.some((s) => s.shard!.count !== count) || indices.join() !== expected.join())
    throw new MergeError(
      `shards ${indices.map((i) => `${i + 1}/${count}`).join(", ")} given: every shard 1/${count} … ${count}/${count} exactly once`,
    );
  const first = runs[0]!;
  const ids = [...new Set(runs.flatMap((r) => r.loadRun.scenarios.map((s) => s.id)))];
  const reports = ids.map((id) => mergeReports(runs.flatMap((r) => r.loadRun.scenarios.filter((s) => s.id === id))));
  const thresholds = (first.results.options.thresholds ?? [])
    .map(parseThreshold)
    .filter((t): t is Threshold => typeof t !== "string");
  const { suites: _suites, sections: _sections, ...options } = first.results.options;
  const interrupted = runs.some((r) => r.results.interrupted);
  const startedAt = new Date(Math.min(...runs.map((r) => Date.parse(r.loadRun.startedAt))));
  return loadRunResult({
    runId,
    seed: first.results.seed ?? 0,
    startedAt,
    target: { ...first.loadRun.target, kind: first.results.target.kind },
    network: first.loadRun.target.network,
    options,
    chosen: SCENARIOS.filter((s) => ids.includes(s.id)),
    reports,
    thresholds,
    interrupted,
  });
}

const sum = (xs: readonly number[]) => xs.reduce((n, x) => n + x, 0);

/** Each endpoint's latency per outcome: the shards' histograms added. */
function mergedLatency(mergeable: readonly NonNullable<ScenarioReport["mergeable"]>[]): ScenarioReport["latency"] {
  const latency: ScenarioReport["latency"] = {};
  for (const endpoint of new Set(mergeable.flatMap((m) => Object.keys(m.latency)))) {
    latency[endpoint] = {};
    for (const o of OUTCOMES) {
      const encoded = mergeable.map((m) => m.latency[endpoint]?.[o]);
      if (encoded.some((e) => e !== undefined)) latency[endpoint][o] = summarizeHistogram(addHistograms(encoded));
    }
  }
  return latency;
}

/** Counts by name, added. */
function addCounts(counts: readonly Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const c of counts) for (const [name, n] of Object.entries(c)) total[name] = (total[name] ?? 0) + n;
  return total;
}

/** The statuses of every second, the shards' added, in order. */
function mergedStatusPerSecond(parts: readonly ScenarioReport[]): ScenarioReport["statusPerSecond"] {
  const statuses = new Map<number, Record<string, number>>();
  for (const p of parts)
    for (const row of p.statusPerSecond) statuses.set(row.second, addCounts([statuses.get(row.second) ?? {}, row.statuses]));
  return [...statuses].sort(([a], [b]) => a - b).map(([second, s]) => ({ second, statuses: s }));
}

/**
 * An error anywhere is the merged run's; skipped only when every shard skipped; failed on any
 * finding; else inconclusive when a shard could not judge, or the merged figures cannot (a flood
 * short of its intent across the shards' others): never a pass.
 */
function mergedStatus(parts: readonly ScenarioReport[], found: number, unjudged: boolean): ScenarioReport["status"] {
  const statuses = parts.map((p) => p.status);
  if (statuses.includes("error")) return "error";
  if (statuses.every((s) => s === "skipped")) return "skipped";
  if (found) return "failed";
  return unjudged || statuses.includes("inconclusive") ? "inconclusive" : "passed";
}

/** Each shard judged its own answers' Remaining (one process each): the judged add up; none judged anywhere is said. */
function mergedRemaining(parts: readonly ScenarioReport[]): Pick<ScenarioReport, "remaining"> {
  const tallies = parts.flatMap((p) => (p.remaining ? [p.remaining] : []));
  if (!tallies.length) return {};
  const remaining = {
    answers: sum(tallies.map((t) => t.answers)),
    judged: sum(tallies.map((t) => t.judged)),
    windows: sum(tallies.map((t) => t.windows)),
  };
  const why = remaining.judged === 0 ? tallies.find((t) => t.unjudged)?.unjudged : undefined;
  return { remaining: why ? { ...remaining, unjudged: why } : remaining };
}

/** The same scenario's reports from every shard, as one report. */
export function mergeReports(parts: readonly ScenarioReport[]): ScenarioReport {
  const base = parts[0]!;
  const mergeable = parts.flatMap((p) => (p.mergeable ? [p.mergeable] : []));
  const latency = mergedLatency(mergeable);
  const stream = (name: keyof (typeof mergeable)[number]["streams"]) =>
    summarizeHistogram(addHistograms(mergeable.map((m) => m.streams[name])));
  const withStreams = parts.filter((p) => p.streams);
  const responses = sum(parts.map((p) => p.conformance.responses));
  const checked = sum(parts.map((p) => p.conformance.checked));
  // the tenant comparison is judged again on the merged figures
  const failures = dedupe(parts.flatMap((p) => p.failures.filter((f) => !f.check.startsWith("noisy-neighbour"))));
  const observations = dedupe(parts.flatMap((p) => p.observations));
  const merged: ScenarioReport = {
    ...base,
    durationMs: Math.max(...parts.map((p) => p.durationMs)),
    failures,
    observations,
    latency,
    statusPerSecond: mergedStatusPerSecond(parts),
    ...(withStreams.length
      ? {
          streams: {
            ttfb: stream("ttfb"),
            firstDelta: stream("firstDelta"),
            gap: stream("gap"),
            total: stream("total"),
            ended: {
              done: sum(withStreams.map((p) => p.streams!.ended.done)),
              error: sum(withStreams.map((p) => p.streams!.ended.error)),
              neither: sum(withStreams.map((p) => p.streams!.ended.neither)),
            },
          },
        }
      : {}),
    conformance: { ...base.conformance, responses, checked, share: responses ? Math.min(1, checked / responses) : 1 },
    ...mergedRemaining(parts),
    transportErrors: addCounts(parts.map((p) => p.transportErrors)),
    rps: Math.round(sum(parts.map((p) => p.rps)) * 10) / 10,
    errors: sum(parts.map((p) => p.errors)),
    // the busiest generator speaks for all: any one bounded by itself bounds the merged figures
    generator: parts.map((p) => p.generator).reduce((a, b) => (b.eventLoopLagP99Ms > a.eventLoopLagP99Ms ? b : a)),
  };
  delete merged.mergeable;
  // the histograms added up too, so that a merged run compares as one (load compare)
  if (parts.some((p) => p.histograms)) merged.histograms = addEncodedLatency(parts.map((p) => p.histograms));
  // the merged figures judge the floods as one process's would: one short of its intent is no pass
  let short: string | undefined;
  if (mergeable.length) {
    const settings = {
      ...mergeable[0]!.settings,
      tenants: sum(mergeable.map((m) => m.settings.tenants)),
      keys: sum(mergeable.map((m) => m.settings.keys)),
      offeredPerSecond: Math.round(sum(mergeable.map((m) => m.settings.offeredPerSecond)) * 10) / 10,
      shards: mergeable.length,
    };
    delete settings.shard;
    const figures = capacityFigures(addTallies(mergeable.map((m) => m.tally)), settings);
    merged.capacity = figures;
    for (const v of figures.neighbours ? neighboursVerdicts(figures.neighbours) : [])
      if (!v.ok) failures.push({ clause: v.clause, check: v.check, expected: v.expected, received: v.received, count: 1 });
    short = figures.neighbours ? floodsShortBecause(figures.neighbours) : undefined;
  }
  merged.status = mergedStatus(parts, failures.length + observations.length, short !== undefined);
  const message = (merged.status === "inconclusive" ? short : undefined) ?? parts.find((p) => p.message)?.message;
  if (message) merged.message = message;
  else delete merged.message;
  return merged;
}

/** One entry per finding key (check, clause, expectation), its counts added; the first one's evidence kept. */
function dedupe<T extends ScenarioFailure | Observation>(items: readonly T[]): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) {
    const key = findingKey(item);
    const seen = byKey.get(key);
    if (seen) byKey.set(key, { ...seen, count: seen.count + item.count });
    else byKey.set(key, { ...item });
  }
  return [...byKey.values()];
}
