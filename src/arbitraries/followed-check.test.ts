import fc from "fast-check";
import { expect, test } from "vitest";
import { checkFollowingCases } from "./followed-check.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Cases that take `ms` each, counting those begun and those ended. */
function slowCases(ms: number) {
  const seen = { begun: 0, ended: 0 };
  const property = fc.asyncProperty(fc.integer(), async () => {
    seen.begun++;
    await sleep(ms);
    seen.ended++;
  });
  return { seen, property };
}

test("a case the time limit cut has ended when the details come back (fast-check alone lets it run on)", async () => {
  const alone = slowCases(80);
  const bare = await fc.check(alone.property, { numRuns: 100, interruptAfterTimeLimit: 200 });
  expect(bare.interrupted).toBe(true);
  expect(alone.seen.ended).toBeLessThan(alone.seen.begun);

  const followed = slowCases(80);
  const { details, cutCaseEnded } = await checkFollowingCases(
    followed.property,
    { numRuns: 100, interruptAfterTimeLimit: 200 },
    5_000,
  );
  expect(details.interrupted).toBe(true);
  expect(details.numRuns).toBeGreaterThan(0);
  expect(cutCaseEnded).toBe(true);
  expect(followed.seen.ended).toBe(followed.seen.begun);
});

test("a first case longer than the limit: no case judged, and fast-check calls it failed with no counterexample", async () => {
  const { seen, property } = slowCases(300);
  const { details, cutCaseEnded } = await checkFollowingCases(property, { numRuns: 10, interruptAfterTimeLimit: 50 }, 5_000);
  expect([details.interrupted, details.numRuns, details.failed, details.counterexample]).toEqual([true, 0, true, null]);
  expect(cutCaseEnded).toBe(true);
  expect(seen).toEqual({ begun: 1, ended: 1 });
});

test("a cut case still running past the wait is said", async () => {
  const { property } = slowCases(1_000);
  const { cutCaseEnded } = await checkFollowingCases(property, { numRuns: 10, interruptAfterTimeLimit: 50 }, 100);
  expect(cutCaseEnded).toBe(false);
  await sleep(1_000);
});
