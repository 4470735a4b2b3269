import { expect, test } from "vitest";
import { isCountedInBuckets } from "./limits.js";

test.for([
  [401, "UNAUTHORIZED", false],
  [429, "RATE_LIMIT_EXCEEDED", false],
  [429, "INSUFFICIENT_QUOTA", true],
  // the exception names one code: a 429 without it is counted like any request
  [429, undefined, true],
  [429, "SLOW_DOWN", true],
  [400, "INVALID_REQUEST", true],
  [404, "NOT_FOUND", true],
  [200, undefined, true],
] as const)("PROFILE §6, §7: %i %s is counted in its buckets: %s", ([status, code, counted]) => {
  expect(isCountedInBuckets(status, code)).toBe(counted);
});
