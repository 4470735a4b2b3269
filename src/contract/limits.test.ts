import { expect, test } from "vitest";
import { isCountedInBuckets } from "./limits.js";

// "status code" as an answer shows them; a status alone is an answer without a code
const NOT_COUNTED = ["401 UNAUTHORIZED", "429 RATE_LIMIT_EXCEEDED"];
// the exception names one code: a 429 without it, or with another, is counted like any request
const COUNTED = ["429 INSUFFICIENT_QUOTA", "429", "429 SLOW_DOWN", "400 INVALID_REQUEST", "404 NOT_FOUND", "200"];

test.for([
  ...NOT_COUNTED.map((a) => [a, false] as const),
  ...COUNTED.map((a) => [a, true] as const),
])("PROFILE §6, §7: %s is counted in its buckets: %s", ([answer, counted]) => {
  const [status, code] = answer.split(" ");
  expect(isCountedInBuckets(Number(status), code)).toBe(counted);
});
