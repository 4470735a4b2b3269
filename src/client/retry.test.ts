import { describe, expect, test } from "vitest";
import { decideRetry, isRetryable, type RetryPolicy, retryDelayMs } from "./retry.js";

const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 };
const top = () => 0.999_999;
const bottom = () => 0;

describe("retryDelayMs", () => {
  test("full jitter: the draw spans [0, base·2^(attempt−1)]", () => {
    expect(retryDelayMs(policy, 1, undefined, bottom)).toBe(0);
    expect(retryDelayMs(policy, 1, undefined, top)).toBe(99);
    expect(retryDelayMs(policy, 3, undefined, top)).toBe(399);
  });

  test("the ceiling stops at maxDelayMs", () => {
    expect(retryDelayMs(policy, 10, undefined, top)).toBe(999);
  });

  test("never sooner than Retry-After", () => {
    expect(retryDelayMs(policy, 1, 3, bottom)).toBe(3_000);
    expect(retryDelayMs(policy, 1, 0, top)).toBe(99);
  });
});

describe("decideRetry", () => {
  // "status code" as an answer shows them; a status alone is an answer without a code
  const RETRYABLE = ["429 RATE_LIMIT_EXCEEDED", "503 SERVICE_UNAVAILABLE", "503"];
  const FINAL = ["429 INSUFFICIENT_QUOTA", "503 AGENT_UNAVAILABLE", "500 INTERNAL_ERROR", "400 INVALID_REQUEST", "200"];
  test.for([...RETRYABLE.map((a) => [a, true] as const), ...FINAL.map((a) => [a, false] as const)])("%s retryable: %s", ([
    answer,
    expected,
  ]) => {
    const [status, code] = answer.split(" ");
    expect(isRetryable({ status: Number(status), code })).toBe(expected);
  });

  test("stops after maxAttempts", () => {
    expect(decideRetry(policy, 3, { status: 429 }, 0, bottom)).toMatchObject({ retry: true });
    expect(decideRetry(policy, 4, { status: 429 }, 0, bottom)).toMatchObject({ retry: false });
  });

  test("stops when the wait would pass the total budget", () => {
    const bounded = { ...policy, maxTotalMs: 10_000 };
    expect(decideRetry(bounded, 1, { status: 429, retryAfterSeconds: 5 }, 4_000, bottom)).toEqual({
      retry: true,
      delayMs: 5_000,
    });
    expect(decideRetry(bounded, 1, { status: 429, retryAfterSeconds: 5 }, 6_000, bottom)).toMatchObject({ retry: false });
  });
});
