import { describe, expect, test } from "vitest";
import { BURST_SLACK_MS, drainMs, planDrain, spentByOthers } from "./drain-window.js";

const W = 2;
/** A paced request read at harness time 10,000 ms after a 20 ms round trip; Reset in the service's seconds. */
const reading = (over: Partial<Parameters<typeof planDrain>[0]> = {}) => ({
  limit: 10,
  remaining: 9,
  reset: 12,
  sentAt: 9_980,
  receivedAt: 10_000,
  roundTrip: 20,
  ...over,
});
const settings = (over: Partial<Parameters<typeof planDrain>[1]> = {}) => ({
  width: 10,
  reserveMs: 0,
  windowSeconds: W,
  serviceOffsetSeconds: 0,
  ...over,
});

describe("planning a burst that empties a bucket (PROFILE §7)", () => {
  test("a burst takes a round trip per width, the two requests after it, and the slack", () => {
    expect(drainMs(9, 10, 20)).toBe(3 * 20 + BURST_SLACK_MS);
    expect(drainMs(60, 9, 100)).toBe(9 * 100 + BURST_SLACK_MS);
  });

  test("a window the paced request opened ends W after it was sent, or at Reset when that is sooner", () => {
    expect(planDrain(reading(), settings()).windowEnd).toBe(9_980 + W * 1000);
    // a service whose windows keep its clock's whole seconds: Reset comes first
    expect(planDrain(reading({ reset: 11 }), settings()).windowEnd).toBe(11_000);
  });

  test("a window already under way ends by Reset, up to a second before it (Reset rounds up)", () => {
    expect(planDrain(reading({ remaining: 5 }), settings()).windowEnd).toBe(11_000);
  });

  test("Reset is read on the service's clock: a clock 3 s ahead ends every window 3 s sooner on the harness's", () => {
    const ahead = settings({ serviceOffsetSeconds: 3 });
    expect(planDrain(reading({ reset: 15 }), ahead).windowEnd).toBe(9_980 + W * 1000);
    expect(planDrain(reading({ remaining: 5, reset: 15 }), ahead).windowEnd).toBe(11_000);
  });

  test("the caller's reserve must fit after the burst, in the same window", () => {
    // 1,980 ms left, the burst 310 ms
    expect(planDrain(reading(), settings({ reserveMs: 1_000 })).fits).toBe(true);
    expect(planDrain(reading({ receivedAt: 10_800, sentAt: 10_780 }), settings({ reserveMs: 1_000 })).fits).toBe(false);
  });

  test("a reserve longer than a window is cut to what a fresh window holds, so a fresh window always serves", () => {
    const fresh = planDrain(reading(), settings({ reserveMs: 60_000 }));
    expect(fresh.wanted).toBe(W * 1000 - 2 * 20 - BURST_SLACK_MS);
    expect(fresh.fits).toBe(true);
  });

  test("a burst longer than the window never fits: the caller measures again in the next window", () => {
    const far = planDrain(reading({ remaining: 59, limit: 60, roundTrip: 300, sentAt: 9_700 }), settings({ width: 1 }));
    expect(far.needed).toBeGreaterThan(W * 1000);
    expect(far.fits).toBe(false);
  });
});

describe("spentByOthers", () => {
  test("our admitted answers say R−1 … R−n: nobody else spent the bucket", () => {
    expect(spentByOthers(5, [4, 3, 2, 1, 0])).toBe(0);
    // in any order: the burst's answers come back as they come
    expect(spentByOthers(5, [2, 4, 0, 3, 1])).toBe(0);
  });

  test("fewer left than our own requests account for: the difference is another client's", () => {
    // 58 of ours admitted after Remaining 59, the last saying 0 left: one was somebody else's
    expect(
      spentByOthers(
        59,
        Array.from({ length: 58 }, (_, i) => 57 - i),
      ),
    ).toBe(1);
    // three of ours after Remaining 10 should leave 7: 6 left is one more request than ours
    expect(spentByOthers(10, [9, 7, 6])).toBe(1);
  });

  test("no gap proves nothing: another client may have taken the last slot after our last answer", () => {
    // 4 of 5 admitted, the last saying 1 left, then a 429: no gap in what we saw
    expect(spentByOthers(5, [4, 3, 2, 1])).toBe(0);
    expect(spentByOthers(5, [])).toBe(0);
  });
});
