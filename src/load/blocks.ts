import * as hdr from "hdr-histogram-js";
import { encodeHistogram } from "./capacity/tally.js";

/**
 * A scenario's latency in consecutive time blocks, per endpoint and outcome: what `load compare`
 * resamples whole (a block bootstrap), so that a stretch of slow answers — the machine busy for
 * a second, a collector pause — weighs as the one event it was, not as many independent answers.
 * Answers resampled one by one make an interval as narrow as if every answer were independent,
 * and two runs of the same build then differ "beyond noise" by whatever the machine did meanwhile.
 */

/** The first block's width; past MAX_BLOCKS neighbours merge and a block spans twice the time. */
const FIRST_WIDTH_MS = 250;
/** At most this many blocks per series, so a soak of hours keeps a bounded number of histograms. */
export const MAX_BLOCKS = 32;

/** Blocks as load.json holds them: the width, and endpoint → outcome → one encoded histogram per block ("" when empty). */
export interface EncodedBlocks {
  widthMs: number;
  latency: Record<string, Record<string, string[]>>;
}

/**
 * A block's histogram: two significant digits (1%), a tenth of the figures' buckets, so the
 * many blocks of a long run stay a few MB; the noise they estimate needs no finer grain. (Packed
 * counts would be smaller still but record four times slower, and every answer is recorded.)
 */
const blockHistogram = () =>
  hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 2 });

/** A block as load.json holds it, with its own precision. */
export const decodeBlock = (encoded: string): hdr.Histogram => hdr.decodeFromCompressedBase64(encoded);

export class LatencyBlocks {
  widthMs = FIRST_WIDTH_MS;
  /** "endpoint\u0000outcome" → block index → histogram (µs) */
  private readonly series = new Map<string, Array<hdr.Histogram | undefined>>();

  /** One answer `us` long, `elapsedMs` after the scenario started. */
  record(endpoint: string, outcome: string, elapsedMs: number, us: number): void {
    let index = Math.floor(Math.max(0, elapsedMs) / this.widthMs);
    while (index >= MAX_BLOCKS) {
      this.widen();
      index = Math.floor(elapsedMs / this.widthMs);
    }
    const key = `${endpoint}\u0000${outcome}`;
    let blocks = this.series.get(key);
    if (!blocks) {
      blocks = [];
      this.series.set(key, blocks);
    }
    let h = blocks[index];
    if (!h) {
      h = blockHistogram();
      blocks[index] = h;
    }
    h.recordValue(us);
  }

  /** Neighbours merged two by two: blocks twice as wide, half as many. */
  private widen(): void {
    this.widthMs *= 2;
    for (const [key, blocks] of this.series) {
      const merged: Array<hdr.Histogram | undefined> = [];
      for (let i = 0; i < blocks.length; i += 2) {
        const [a, b] = [blocks[i], blocks[i + 1]];
        if (a && b) a.add(b);
        merged.push(a ?? b);
      }
      this.series.set(key, merged);
    }
  }

  get size(): number {
    return this.series.size;
  }

  toJSON(): EncodedBlocks {
    const latency: EncodedBlocks["latency"] = {};
    for (const [key, blocks] of this.series) {
      const [endpoint = "", outcome = ""] = key.split("\u0000");
      latency[endpoint] ??= {};
      latency[endpoint][outcome] = Array.from(blocks, (h) => (h?.totalCount ? encodeHistogram(h) : ""));
    }
    return { widthMs: this.widthMs, latency };
  }
}
