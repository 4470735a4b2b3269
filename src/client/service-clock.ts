import { request } from "undici";
import { z } from "zod";
import { type Clock, systemClock } from "./clock.js";
import { networkAgent } from "./network.js";

/**
 * The service's clock as the runner estimates it. PROFILE §7 X-RateLimit-Reset and §4 createdAt
 * and updatedAt are times on the service's clock, which may differ from the runner's by seconds
 * on a deployment: a check judges them on the service's clock, read from its HTTP `Date` header
 * (RFC 9110 §6.6.1) and the round trip, or, without one, on the runner's clock and says so.
 */
export const ServiceClockSchema = z.object({
  /** service clock minus runner clock, ms */
  offsetMs: z.number(),
  /** the true offset is within ± this of `offsetMs`, ms */
  uncertaintyMs: z.number().nonnegative(),
  /** `date`: from the Date header; `runner`: no Date header came, the runner's clock stands in */
  source: z.enum(["date", "runner"]),
  /** requests the estimate took (unauthenticated: PROFILE §6, they count in no rate limit) */
  probes: z.number().int().nonnegative(),
});
export type ServiceClock = z.infer<typeof ServiceClockSchema>;

/** One answer's Date header and when, on the runner's clock, its request left and its headers came. */
export interface DateSample {
  sentAt: number;
  receivedAt: number;
  date: string | undefined;
}

/**
 * The Date header (whole seconds, rounded down) read somewhere between sending and receiving:
 * each answer bounds the offset to (Date − received, Date + 1 s − sent). The bounds of all answers
 * intersect; answers straddling a second's turn narrow it below the round trip.
 */
export function offsetFromSamples(samples: readonly DateSample[]): ServiceClock {
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  const mids: number[] = [];
  for (const s of samples) {
    const date = s.date === undefined ? Number.NaN : Date.parse(s.date);
    if (!Number.isFinite(date)) continue;
    const [low, high] = [date - s.receivedAt, date + 1000 - s.sentAt];
    mids.push((low + high) / 2);
    lo = Math.max(lo, low);
    hi = Math.min(hi, high);
  }
  if (mids.length === 0) return { offsetMs: 0, uncertaintyMs: 0, source: "runner", probes: samples.length };
  // bounds that do not meet: a clock stepped between two answers, or a Date not read between
  // sending and receiving (a cache in front): the middle answer, with a second's doubt either way
  if (lo > hi) {
    const sorted = [...mids].sort((a, b) => a - b);
    return { offsetMs: Math.round(sorted[sorted.length >> 1]!), uncertaintyMs: 1000, source: "date", probes: samples.length };
  }
  return { offsetMs: Math.round((lo + hi) / 2), uncertaintyMs: Math.ceil((hi - lo) / 2), source: "date", probes: samples.length };
}

export interface EstimateOptions {
  clock?: Clock;
  /** at most this many requests (default 12) */
  maxProbes?: number;
  /** between two requests, so they straddle a turn of the Date header's second (default 100 ms) */
  spacingMs?: number;
  /** stop once the estimate is this close (default 100 ms) */
  goodEnoughMs?: number;
  /** one request; the default is an unauthenticated GET of `/agents` (a 401, counted nowhere) */
  probe?: () => Promise<DateSample>;
}

const MAX_PROBES = 12;
const SPACING_MS = 100;
/** a probe's headers, then its body, each within this */
const PROBE_TIMEOUT_MS = 15_000;
/** The longest an estimate with the default options can take: every probe at its timeouts. */
export const ESTIMATE_BOUND_MS = MAX_PROBES * (2 * PROBE_TIMEOUT_MS + SPACING_MS);

/** `GET {baseUrl}/agents` without a key: PROFILE §6, a 401 counts against no rate limit. */
function dateProbe(baseUrl: string, clock: Clock, timeoutMs = PROBE_TIMEOUT_MS) {
  const dispatcher = networkAgent(1);
  const probe = async (): Promise<DateSample> => {
    const sentAt = clock.now();
    const res = await request(`${baseUrl}/agents`, {
      method: "GET",
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      dispatcher,
    });
    const receivedAt = clock.now();
    await res.body.dump();
    const date = res.headers.date;
    return { sentAt, receivedAt, date: Array.isArray(date) ? date[0] : date };
  };
  return { probe, close: () => dispatcher.close() };
}

/**
 * A few requests, spaced so that they straddle a turn of the Date header's second, until the
 * offset is known within `goodEnoughMs` or the probes run out (about a second at most).
 */
export async function estimateServiceClock(baseUrl: string, options: EstimateOptions = {}): Promise<ServiceClock> {
  const clock = options.clock ?? systemClock;
  const { probe, close } = options.probe ? { probe: options.probe, close: async () => {} } : dateProbe(baseUrl, clock);
  const samples: DateSample[] = [];
  let estimate = offsetFromSamples(samples);
  try {
    for (let i = 0; i < (options.maxProbes ?? MAX_PROBES); i++) {
      if (i > 0) await clock.sleep(options.spacingMs ?? SPACING_MS);
      samples.push(await probe());
      estimate = offsetFromSamples(samples);
      if (estimate.source === "runner" || estimate.uncertaintyMs <= (options.goodEnoughMs ?? 100)) break;
    }
  } finally {
    await close();
  }
  return estimate;
}

/**
 * How a check reads the service's times, in seconds: its clock's offset from the runner's, and
 * the difference it tolerates — the estimate's doubt plus a quarter second (a server's Date may
 * lag its clock by a timer's delay), or, with no estimate, `fallbackSeconds`.
 */
export function clockReading(clock: ServiceClock | undefined, fallbackSeconds: number) {
  return clock?.source === "date"
    ? { offsetSeconds: clock.offsetMs / 1000, toleranceSeconds: clock.uncertaintyMs / 1000 + 0.25 }
    : { offsetSeconds: 0, toleranceSeconds: fallbackSeconds };
}

/** `service clock: +10.02 s ± 0.05 s (its Date header, 4 requests)` — the line the terminal and report show. */
export function describeServiceClock(clock: ServiceClock): string {
  if (clock.source === "runner")
    return "service clock: no Date header — its times (X-RateLimit-Reset, createdAt, updatedAt) are judged on the runner's clock";
  const s = clock.offsetMs / 1000;
  return `service clock: ${s >= 0 ? "+" : "−"}${Math.abs(s).toFixed(2)} s ± ${(clock.uncertaintyMs / 1000).toFixed(2)} s from the runner's (its Date header, ${clock.probes} requests)`;
}
