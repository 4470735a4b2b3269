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

// cases of 50 ms under a limit of 1 s: some cases surely end inside it, and one is surely running
// when it strikes (100 cases take 5 s), however late a busy machine fires the timers (80 ms under
// 200 ms once judged no case while a matrix run shared the machine)
test("a case the time limit cut has ended when the details come back (fast-check alone lets it run on)", async () => {
  const alone = slowCases(50);
  const bare = await fc.check(alone.property, { numRuns: 100, interruptAfterTimeLimit: 1_000 });
  expect(bare.interrupted).toBe(true);
  expect(alone.seen.ended).toBeLessThan(alone.seen.begun);

  const followed = slowCases(50);
  const { details, cutCaseEnded } = await checkFollowingCases(
    followed.property,
    { numRuns: 100, interruptAfterTimeLimit: 1_000 },
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

test("a cut case that fails after the limit says so: fast-check never saw its failure", async () => {
  const property = fc.asyncProperty(fc.integer(), async () => {
    await sleep(200);
    throw new Error("the service broke");
  });
  const { details, cutCaseEnded, cutCaseError } = await checkFollowingCases(
    property,
    { numRuns: 10, interruptAfterTimeLimit: 50 },
    5_000,
  );
  expect([details.interrupted, details.numRuns, cutCaseEnded]).toEqual([true, 0, true]);
  expect(String(cutCaseError)).toContain("the service broke");
});

class LostConnection extends Error {}

test("while a service's failure shrinks, a candidate lost to the network is skipped, not taken as the counterexample", async () => {
  // the service fails every value over 10; the network loses the requests of 1 to 10, which
  // shrinking toward 0 tries on its way
  const property = () =>
    fc.asyncProperty(fc.integer({ min: 0, max: 1_000 }), async (x) => {
      if (x >= 1 && x <= 10) throw new LostConnection(`lost ${x}`);
      if (x > 10) throw new Error(`service failed ${x}`);
    });
  const params = { seed: 5, numRuns: 100 };
  const bare = await fc.check(property(), params);
  expect(bare.errorInstance).toBeInstanceOf(LostConnection);
  const { details } = await checkFollowingCases(property(), params, 5_000, (e) => e instanceof LostConnection);
  expect(details.failed).toBe(true);
  expect(String(details.errorInstance)).toBe("Error: service failed 11");
  expect(details.counterexample).toEqual([11]);
});
