import { describe, expect, test } from "vitest";
import { InconclusiveError } from "../context.js";
import { LoadRecorder } from "../recorder.js";
import { deploymentAt } from "../test-support.js";
import { type HeldStream, judgeRefill, type Refill } from "./slot-release.js";

/** A stream the refill admitted and holds (what the verdict counts of it). */
const held = (): HeldStream => ({
  abort: new AbortController(),
  flowing: Promise.resolve(),
  result: new Promise(() => {}),
  ended: () => false,
});

const refill = (count: number, rest: Partial<Refill> = {}): Refill => ({
  ms: 1400,
  held: Array.from({ length: count }, held),
  refusedLate: false,
  ...rest,
});

/** PROFILE §7 limits.concurrency: "a slot frees when its exchange ends … client gone". */
describe("slot-release: the verdict on freed slots tried again", () => {
  const recorder = () => new LoadRecorder(deploymentAt("http://127.0.0.1:9/v1", { windowSeconds: 2 }), "slot-release");

  test("all held: no failure, however long the tries took", () => {
    const r = recorder();
    judgeRefill(r, refill(10, { ms: 5000 }), 10, "ten freed slots");
    expect(r.failures).toEqual([]);
  });

  test("a try sent after the allowance refused: a limits.concurrency failure naming how many were admitted", () => {
    const r = recorder();
    judgeRefill(r, refill(9, { refusedLate: true }), 10, "ten freed slots");
    expect(r.failures.map((f) => [f.clause, f.received])).toEqual([
      ["limits.concurrency", "9 admitted in 1400 ms; a try sent after the allowance was still refused (429)"],
    ]);
  });

  test("neither all held nor a late try refused: inconclusive, naming the last failed try, and no failure", () => {
    const r = recorder();
    const judged = () => judgeRefill(r, refill(9, { lastFailure: "no answer" }), 10, "ten freed slots");
    expect(judged).toThrow(InconclusiveError);
    expect(judged).toThrow(
      /9 of 10 held after 1400 ms, and no try sent after the allowance came back refused; the last failed try: no answer/,
    );
    expect(r.failures).toEqual([]);
  });
});
