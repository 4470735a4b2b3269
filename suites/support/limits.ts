import type { ApiResult, Exchange } from "../../src/client/index.js";
import { RATE_LIMITS } from "../../src/contract/index.js";
import { BURST_SLACK_MS, planDrain, spentByOthers } from "../../src/plan/drain-window.js";
import {
  Blocked,
  budget,
  ConformanceFailure,
  expect,
  expectError,
  HarnessError,
  Inconclusive,
  SERVICE_CLOCK,
  target,
  waitForRefill,
} from "./harness.js";

/**
 * PROFILE §7 helpers shared by the limits suites. Each check that empties a bucket does it on
 * purpose (`pace: false`), once, and then waits for the refill its 429 announced.
 */

export type Result = ApiResult<unknown>;
/** A request counted in the bucket under test; `pace: false` sends it at once (the budget still counts it). */
export type Probe = (pace: boolean) => Promise<Result>;

export const W = target.windowSeconds;
export const MISSING_ID = "agt_doesnotexist000";
export const MAX_DRAIN_ATTEMPTS = 3;
/** requests of a Send Message burst in flight together: under the 10 one agent may have in flight (PROFILE §7) */
export const MESSAGE_BURST_WIDTH = RATE_LIMITS.messageConcurrency - 1;
export const SIZES = RATE_LIMITS.perKeyEndpoint;
/**
 * How long the main lane's last files may wait for the quota lane to end (src/plan/lanes.ts): the
 * lanes are balanced to end together, and thirty windows are past any plan's bound.
 */
export const HAND_OFF_TIMEOUT_MS = 30 * W * 1000;

export const label = (res: { exchange: Exchange }) => `${res.exchange.request.method} ${res.exchange.request.url}`;

/** The account's tier, when the run knows it, is the only other bucket a 429 may describe. */
export function expectTierLimit(res: Result): void {
  if (target.tierLimit !== undefined)
    expect(res.exchange.rate?.limit, `${label(res)}: X-RateLimit-Limit of the tier`).toBe(target.tierLimit);
}

export interface DrainOptions {
  /** the request whose effect matters, sent last: it must find the bucket empty too */
  final?: Probe;
  /** requests in flight together during the burst */
  width?: number;
  /**
   * time the caller needs after the drain, in the same window (a flood of 429s that must all meet
   * the emptied bucket): a window with less left than the burst and this is waited out for a fresh one
   */
  reserveMs?: number;
}

/**
 * Empty one bucket on purpose (PROFILE §7). A paced request reads X-RateLimit-Remaining; exactly that
 * many more go at once and are all admitted; then `final` must find the bucket empty. Starts over
 * in a later window when the window could end mid-burst or the tier runs out first.
 */
export async function drainBucket(
  size: number,
  counted: Probe,
  { final = counted, width: fullWidth = size, reserveMs = 0 }: DrainOptions = {},
): Promise<Result> {
  let tooSlow = "";
  /** why each window tried did not serve, for the error that ends the tries */
  const misses: string[] = [];
  /** another client's spending of the bucket, seen in a window's answers */
  const foreign: string[] = [];
  /** an early 429 no answer explained, waiting for a second window to show it again */
  let earlier: string | undefined;
  // a window with too little left is waited out for a fresh one, and a burst a window cut short is
  // tried again in a fresh one: MAX_DRAIN_ATTEMPTS bursts at most, each after at most one such wait
  for (let tried = 1, bursts = 0; bursts < MAX_DRAIN_ATTEMPTS && tried <= 2 * MAX_DRAIN_ATTEMPTS; tried++) {
    const first = await counted(true);
    expect(first.status, `${label(first)}: a paced request`).not.toBe(429);
    const rate = first.exchange.rate;
    const { limit, remaining, reset } = rate ?? {};
    if (limit === undefined || remaining === undefined || reset === undefined)
      throw new Blocked(`${label(first)} carried no usable X-RateLimit-* headers: cannot empty the bucket`);
    if (limit !== size) {
      // PROFILE §7: the headers describe the bucket with the fewest remaining; now it is the tier's
      expectTierLimit(first);
      misses.push("the tier had fewer left than the bucket");
      await waitForRefill(first.exchange);
      continue;
    }
    // STYLE §12: the burst is planned on the round trip just measured, not on loopback, and must fit
    // in what is left of the window (a window that does end mid-burst is caught below and tried
    // again in a fresh one)
    const roundTrip = first.exchange.durationMs;
    const reading = { limit, remaining, reset, sentAt: first.exchange.sentAt, receivedAt: first.exchange.receivedAt, roundTrip };
    const plan = (w: number) =>
      planDrain(reading, { width: w, reserveMs, windowSeconds: W, serviceOffsetSeconds: SERVICE_CLOCK.offsetSeconds });
    // after an early 429, one request at a time where the window allows it: a request sent after a
    // 429's answer and admitted in its window proves the refusal had room (below)
    const oneByOne = earlier !== undefined || foreign.length > 0 ? plan(1) : undefined;
    const width = oneByOne?.fits ? 1 : fullWidth;
    const { needed, windowEnd, left, fits } = oneByOne?.fits ? oneByOne : plan(fullWidth);
    if (!fits) {
      // a round trip that long on a window this short (a busy runner, a far service): measure again in the next window
      if (needed > W * 1000)
        tooSlow = `a burst of ${remaining}, ${width} at a time, needs ${Math.round(needed)} ms at the round trip measured (${Math.round(roundTrip)} ms): more than the window of ${W} s, which must be at least ten round trips`;
      misses.push(
        `${Math.max(0, Math.round(left))} ms of the window left, the burst needs ${Math.round(needed)} ms${reserveMs ? ` and what follows it ${Math.round(reserveMs)} ms` : ""}`,
      );
      await freshWindow(size, first.exchange);
      continue;
    }
    bursts++;
    const tierRanOutFirst = (res: Result) => res.status === 429 && res.exchange.rate?.limit !== size;
    const burst = await inBatches(remaining, width, () => counted(false), tierRanOutFirst);
    const tierRanOut = burst.find(tierRanOutFirst);
    const early = tierRanOut === undefined ? burst.findIndex((res) => res.status === 429) : -1;
    if (early >= 0) {
      const refused = burst[early]!;
      const promise = `request ${early + 1} of the ${remaining} X-RateLimit-Remaining promised to be admitted`;
      // an answer of this window's bucket (not the tier's, nor another window's)
      const sameWindow = (res: Result) => res.exchange.rate?.reset === reset && res.exchange.rate.limit === size;
      // our answers of the window say how many were left after each: a gap is another client's spending
      const admitted = burst.flatMap((res) =>
        res.status !== 429 && sameWindow(res) && res.exchange.rate?.remaining !== undefined ? [res.exchange.rate.remaining] : [],
      );
      // a 429 that said this window's bucket was empty (for want of room: never the tier's of the same
      // size nor the in-flight cap's), then one of ours sent after it admitted in the same window: the
      // bucket refused with room, whatever another client spent (spending never makes room)
      const emptyBucket =
        sameWindow(refused) &&
        target.tierLimit !== size &&
        refused.error?.code === "RATE_LIMIT_EXCEEDED" &&
        refused.exchange.rate?.remaining === 0;
      const admittedAfter = emptyBucket
        ? burst.findIndex((res) => res.status !== 429 && sameWindow(res) && res.exchange.sentAt > refused.exchange.receivedAt)
        : -1;
      if (admittedAfter >= 0)
        throw new ConformanceFailure(
          `${label(refused)}: ${promise} was refused 429 (X-RateLimit-Remaining ${refused.exchange.rate?.remaining}), and request ${admittedAfter + 1}, sent after that answer, was admitted in the same window: the bucket refused with room`,
          "limits.endpoint-bucket",
        );
      // one at a time, each of our requests took the same two or more of the bucket: no neighbour
      // spends in step with us request after request; the bucket counts each more than once
      const steps = width === 1 ? admitted.map((left, i) => (i === 0 ? remaining : admitted[i - 1]!) - left) : [];
      if (steps.length >= 3 && steps.every((step) => step === steps[0]) && steps[0]! >= 2)
        throw new ConformanceFailure(
          `${label(refused)}: X-RateLimit-Remaining fell by ${steps[0]} for each of our ${steps.length} requests sent one at a time (${remaining} → ${admitted.join(", ")}), and ${promise} was refused 429: a request counts once`,
          "limits.endpoint-bucket",
        );
      const others = spentByOthers(remaining, admitted);
      if (others > 0) {
        foreign.push(
          `another client spent ${others} of the bucket's requests in a window (X-RateLimit-Remaining fell to ${Math.min(...admitted)} after ${admitted.length} of ours)`,
        );
        misses.push(foreign.at(-1)!);
        await freshWindow(size, refused.exchange);
        continue;
      }
      // the headers' promise broke, not the bucket: a finding of PROFILE §7 limits.headers, once a
      // fresh window shows it again (another client of the key may have taken the last slot once)
      if (earlier === undefined) {
        earlier = `${label(refused)}: ${promise}`;
        misses.push(`a 429 to ${promise}: asked again in a fresh window`);
        await freshWindow(size, refused.exchange);
        continue;
      }
      throw new ConformanceFailure(
        `${label(refused)}: expected ${promise}; received 429, in two windows (the first: ${earlier})`,
        "limits.headers",
      );
    }
    if (tierRanOut !== undefined) {
      expectTierLimit(tierRanOut);
      misses.push("the tier ran out first");
      await waitForRefill(tierRanOut.exchange);
      continue;
    }
    // first a request without effect: a window that ended mid-burst refilled the bucket — not a
    // breach, and nothing happened, so try again from the start of a fresh window
    const over = await counted(false);
    if (over.status !== 429 && (over.exchange.rate?.reset ?? 0) > reset) {
      misses.push(
        `the window ended mid-burst (${burst.length} sent in ${Math.round(over.exchange.sentAt - first.exchange.receivedAt)} ms)`,
      );
      await freshWindow(size, over.exchange);
      continue;
    }
    expect(over.status, `${label(over)}: one request past the ${size} of the bucket`).toBe(429);
    if (final === counted) return over;
    // the request whose effect matters goes only with room left in the window for its round trip:
    // one that a window's end admits has its effect, and cannot be taken back to try again (a burst
    // slower than planned, on a starved runner, can leave the window's last few ms to it). So, with
    // too little left, a fresh window, as for a burst the window cut short; a 429 had no effect
    const slowest = Math.max(roundTrip, over.exchange.durationMs);
    const leftForLast = windowEnd - over.exchange.receivedAt;
    if (leftForLast < slowest + BURST_SLACK_MS) {
      misses.push(`${Math.max(0, Math.round(leftForLast))} ms of the window left for the request whose effect matters`);
      await freshWindow(size, over.exchange);
      continue;
    }
    // the bucket is empty and a 429 counts in no bucket: the request whose effect matters must find it empty too
    const last = await final(false);
    if (last.status !== 429 && (last.exchange.rate?.reset ?? 0) > reset)
      throw new HarnessError(`${label(last)}: the window ended between two requests a few ms apart: inconclusive`);
    expect(last.status, `${label(last)}: one request past the ${size} of the bucket`).toBe(429);
    return last;
  }
  const why = `could not empty a bucket of ${size} within ${misses.length} windows${tooSlow ? `: ${tooSlow}` : ""} (${misses.join("; ")})`;
  // another client's spending is no harness error: the check could not judge
  if (foreign.length > 0) throw new Inconclusive(`${why}: another client's activity in the account`);
  throw new HarnessError(why);
}

/**
 * Wait until the next request opens a fresh window of the bucket being emptied. With a tier the
 * size of the bucket (a tier of 60, Send Message's 60 a window) the headers describe whichever has
 * fewer left, and each paced request opens a window in the one that just refilled while the
 * other's runs on: the two stay staggered, and waiting for one Reset never finds both fresh.
 * PROFILE §7: every window that counted the last request has ended W + 1 s after it, so the next
 * request opens both together. Otherwise the described bucket's own Reset is enough.
 */
async function freshWindow(size: number, last: Exchange): Promise<void> {
  if (target.tierLimit === size) await budget.afterExhaustion({ receivedAt: last.receivedAt });
  else await waitForRefill(last);
}

/**
 * PROFILE §7: 429 RATE_LIMIT_EXCEEDED from an empty bucket, describing that bucket. Remaining 0,
 * Retry-After and a Reset within W + 1 s that agrees with it are the response-level checks'
 * (rate-limit-headers, retry-after), judged on every 429 of the run: one finding each, not a
 * failure of every check that emptied a bucket (STYLE §10).
 */
export function expectEmptyBucket429(res: Result, size: number): void {
  expectError(res, "RATE_LIMIT_EXCEEDED");
  const limit = res.exchange.rate?.limit;
  // both buckets empty: the one that refills last is described — the tier, when it is
  const sizes = [size, target.tierLimit].filter((n) => n !== undefined);
  expect(
    sizes.includes(limit as number),
    `${label(res)}: expected X-RateLimit-Limit to be the bucket's size (${sizes.join(" or ")}); received ${limit}`,
  ).toBe(true);
}

/**
 * `count` requests with `width` in flight together, in the order of `i`: each place sends the next
 * request as soon as its answer came (a slow answer holds back one place, not a batch, so the
 * burst takes ⌈count / width⌉ round trips on average, not its slowest answers' sum). Once `stop`
 * held for an answer no more are sent; the answers come back by `i`.
 */
export async function inBatches<T>(count: number, width: number, send: (i: number) => Promise<T>, stop: (r: T) => boolean) {
  const answers: (T | undefined)[] = [];
  let next = 0;
  let stopped = false;
  const place = async () => {
    while (!stopped && next < count) {
      const i = next++;
      const answer = await send(i);
      answers[i] = answer;
      if (stop(answer)) stopped = true;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, count)) }, place));
  return answers.filter((a): a is T => a !== undefined);
}
