/*
 * PROFILE §7: when a check empties a bucket on purpose, its burst must fit in what is left of one
 * window, planned on the round trip just measured (STYLE §12: never loopback's). The planning
 * arithmetic, apart from the requests, so that it can be tested on its own.
 */

/** What a busy machine adds to the round trips a burst is planned on. */
export const BURST_SLACK_MS = 250;

/**
 * How long a burst of `count` requests, `width` in flight together, takes at `roundTrip` ms: one
 * round trip per `width` (each place sends its next request as soon as its answer came), then the
 * request past it and the one whose effect matters, and what a busy machine adds.
 */
export const drainMs = (count: number, width: number, roundTrip: number): number =>
  (Math.ceil(count / width) + 2) * roundTrip + BURST_SLACK_MS;

/** The paced request that read the bucket before the burst (harness clock, ms; `reset` in the service's Unix seconds). */
export interface DrainReading {
  limit: number;
  remaining: number;
  reset: number;
  sentAt: number;
  receivedAt: number;
  roundTrip: number;
}

export interface DrainSettings {
  /** requests in flight together */
  width: number;
  /** time the caller needs after the burst, in the same window */
  reserveMs: number;
  windowSeconds: number;
  /** the service's clock ahead of the harness's, seconds */
  serviceOffsetSeconds: number;
}

export interface DrainPlan {
  /** the burst's time at the round trip read */
  needed: number;
  /** when the window the burst meets ends, harness clock */
  windowEnd: number;
  /** what is left of it once the reading came back */
  left: number;
  /** what the burst needs of it: itself, and the caller's reserve as far as a fresh window holds it */
  wanted: number;
  /** the burst goes in this window; else a fresh one is waited for */
  fits: boolean;
}

/**
 * The window's end: W after the paced request when it opened the window (PROFILE §7: the reference
 * starts it at the first counted request) or, when the service keeps its windows on its clock's
 * whole seconds, its Reset (up to 1 s sooner): the earlier of the two. Else Reset, rounded up, so
 * up to 1 s of it may be gone. The caller's reserve counts only as far as a window holds it: a
 * fresh window's first answer leaves about W less a round trip, and no wait makes more room than
 * that, so a reserve larger than a window never makes every window too short.
 */
export function planDrain(reading: DrainReading, settings: DrainSettings): DrainPlan {
  const W = settings.windowSeconds * 1000;
  const needed = drainMs(reading.remaining, settings.width, reading.roundTrip);
  const resetAt = reading.reset * 1000 - settings.serviceOffsetSeconds * 1000;
  const windowEnd = reading.remaining === reading.limit - 1 ? Math.min(reading.sentAt + W, resetAt) : resetAt - 1000;
  const left = windowEnd - reading.receivedAt;
  const wanted = Math.min(needed + settings.reserveMs, Math.max(needed, W - 2 * reading.roundTrip - BURST_SLACK_MS));
  return { needed, windowEnd, left, wanted, fits: left >= wanted };
}

/**
 * Requests of the drained bucket another client spent in the burst's window, as our own answers
 * show it: with the paced request's answer saying `remainingBefore` left, our `admittedRemaining`
 * answers (admitted in that window, each saying how many are left after it) say R−1 … R−n when
 * nobody else spends the bucket; fewer left than that is somebody else's spending, seen. Zero
 * proves nothing either way: another client's request may have taken the window's last slot after
 * our last admitted answer, so an early 429 with no gap is judged only when a fresh window shows it too.
 */
export function spentByOthers(remainingBefore: number, admittedRemaining: readonly number[]): number {
  if (admittedRemaining.length === 0) return 0;
  return Math.max(0, remainingBefore - admittedRemaining.length - Math.min(...admittedRemaining));
}
