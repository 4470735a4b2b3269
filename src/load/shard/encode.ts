import { type CapacitySettings, CapacityTally, decodeHistogram, type EncodedTally, encodeHistogram } from "../capacity/tally.js";
import { type LoadRecorder, newHistogram, OUTCOMES, type Outcome } from "../recorder.js";

/**
 * What a shard adds to its scenario's report so that `load merge` can add shards up exactly:
 * every histogram the figures come from (HDR, compressed), and the capacity tally.
 */
export interface MergeableFigures {
  /** endpoint label → outcome → encoded histogram (µs) */
  latency: Record<string, Partial<Record<Outcome, string>>>;
  streams: { ttfb: string; firstDelta: string; gap: string; total: string };
  tally: EncodedTally;
  settings: CapacitySettings;
}

/** Every latency histogram of a scenario, encoded: what `load merge` adds up and `load compare` resamples. */
export function encodedLatency(recorder: LoadRecorder): MergeableFigures["latency"] {
  const latency: MergeableFigures["latency"] = {};
  for (const [endpoint, byOutcome] of recorder.latency) {
    const row: Partial<Record<Outcome, string>> = {};
    for (const o of OUTCOMES) {
      const h = byOutcome.get(o);
      if (h) row[o] = encodeHistogram(h);
    }
    latency[endpoint] = row;
  }
  return latency;
}

export function mergeableOf(
  recorder: LoadRecorder,
  capacity: { tally: CapacityTally; settings: CapacitySettings },
): MergeableFigures {
  const s = recorder.streams;
  return {
    latency: encodedLatency(recorder),
    streams: {
      ttfb: encodeHistogram(s.ttfb),
      firstDelta: encodeHistogram(s.firstDelta),
      gap: encodeHistogram(s.gap),
      total: encodeHistogram(s.total),
    },
    tally: capacity.tally.toJSON(),
    settings: capacity.settings,
  };
}

/** Several encoded histograms added into one (HDR adds exactly: the same counts per bucket). */
export function addHistograms(encoded: readonly (string | undefined)[]) {
  const h = newHistogram();
  for (const e of encoded) if (e !== undefined) h.add(decodeHistogram(e));
  return h;
}

/** Several shards' encoded latency histograms added up, per endpoint and outcome. */
export function addEncodedLatency(parts: readonly (MergeableFigures["latency"] | undefined)[]): MergeableFigures["latency"] {
  const out: MergeableFigures["latency"] = {};
  for (const endpoint of new Set(parts.flatMap((p) => Object.keys(p ?? {})))) {
    const row: Partial<Record<Outcome, string>> = {};
    for (const o of OUTCOMES) {
      const encoded = parts.map((p) => p?.[endpoint]?.[o]);
      if (encoded.some((e) => e !== undefined)) row[o] = encodeHistogram(addHistograms(encoded));
    }
    out[endpoint] = row;
  }
  return out;
}

/** Several shards' tallies added into one. */
export function addTallies(tallies: readonly EncodedTally[]): CapacityTally {
  const t = new CapacityTally();
  for (const other of tallies) t.add(other);
  return t;
}
