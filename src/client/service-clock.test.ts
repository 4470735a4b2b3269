import { describe, expect, test } from "vitest";
import { FakeClock } from "./clock.js";
import { clockReading, type DateSample, estimateServiceClock, offsetFromSamples } from "./service-clock.js";

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
/** A service whose clock is `offsetMs` ahead, answering after `rttMs` (read halfway). */
const sample = (sentAt: number, offsetMs: number, rttMs = 20): DateSample => ({
  sentAt,
  receivedAt: sentAt + rttMs,
  date: new Date(Math.floor((sentAt + rttMs / 2 + offsetMs) / 1000) * 1000).toUTCString(),
});

describe("service clock", () => {
  test.for([10_000, -10_000, 0, 2_345])("answers straddling a turn of the second pin an offset of %i ms", (offset) => {
    const samples = Array.from({ length: 12 }, (_, i) => sample(T0 + 37 + i * 100, offset));
    const clock = offsetFromSamples(samples);
    expect(clock.source).toBe("date");
    expect(Math.abs(clock.offsetMs - offset)).toBeLessThanOrEqual(clock.uncertaintyMs);
    expect(clock.uncertaintyMs).toBeLessThanOrEqual(120);
  });

  test("no Date header: the runner's clock, said so", () => {
    const clock = offsetFromSamples([{ sentAt: T0, receivedAt: T0 + 5, date: undefined }]);
    expect(clock).toMatchObject({ source: "runner", offsetMs: 0 });
    expect(clockReading(clock, 2)).toEqual({ offsetSeconds: 0, toleranceSeconds: 2 });
  });

  test("the estimate stops once it is good enough, within about a second of probes", async () => {
    const fake = new FakeClock(T0 + 450);
    const clock = await estimateServiceClock("http://unused", {
      clock: fake,
      probe: async () => sample(fake.now(), 10_000),
    });
    expect(Math.abs(clock.offsetMs - 10_000)).toBeLessThanOrEqual(clock.uncertaintyMs);
    expect(clock.probes).toBeLessThanOrEqual(12);
    expect(fake.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1_100);
  });
});
