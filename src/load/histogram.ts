import * as hdr from "hdr-histogram-js";

/** HDR histograms in microseconds, 1 µs to 10 min, 3 significant digits (autocannon's own settings). */
export function newHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
}

/** Milliseconds with three significant digits or so, as every load report prints them. */
export const formatMs = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
